"""Bad inputs and damages of `internals`: items, sites, store options and shards, loading."""

from __future__ import annotations

import torch

from internals import ItemError, Site, SiteError, SpanItem, sites
from tests.bad_inputs.case import Case, Env

GOOD = SpanItem("The cat sat.", spans=((4, 7),))


def bert_features(env: Env, items: list, **options) -> torch.Tensor:
    return env.bert.features(items, progress=False, **options)


def static_features(env: Env, items: list, **options) -> torch.Tensor:
    return env.static.features(items, progress=False, **options)


def item_case(id: str, what: str, expect: str, build, match: str, typed: bool = False) -> Case:
    return Case(
        id,
        what,
        expect,
        lambda env: static_features(env, [GOOD, build()]),
        ItemError,
        match,
        typed=typed,
    )


ITEMS = [
    Case(
        "item-text-int",
        "SpanItem(123)",
        "ItemError: text is a int",
        lambda env: SpanItem(123),
        ItemError,
        r"SpanItem: text is a int",
        typed=True,
    ),
    Case(
        "item-text-bytes",
        'SpanItem(b"The cat")',
        "ItemError: text is bytes; decode it",
        lambda env: SpanItem(b"The cat"),
        ItemError,
        r"text is bytes .*decode",
        typed=True,
    ),
    Case(
        "item-pair-int",
        'SpanItem("A b.", text_pair=5)',
        "ItemError: text_pair is a int",
        lambda env: SpanItem("A b.", text_pair=5),
        ItemError,
        r"text_pair is a int",
        typed=True,
    ),
    Case(
        "item-float-bound",
        "spans=((0.5, 3),)",
        "ItemError: bound 0.5 is a float (never truncated)",
        lambda env: SpanItem("The cat", spans=((0.5, 3),)),
        ItemError,
        r"bound 0\.5 .* is a float",
        typed=True,
    ),
    Case(
        "item-string-bound",
        'spans=(("0", "3"),)',
        "ItemError: bound '0' is a str",
        lambda env: SpanItem("The cat", spans=(("0", "3"),)),
        ItemError,
        r"bound '0' .* is a str",
        typed=True,
    ),
    Case(
        "item-bool-bound",
        "spans=((True, 3),)",
        "ItemError: bound True is a bool",
        lambda env: SpanItem("The cat", spans=((True, 3),)),
        ItemError,
        r"bound True",
        typed=True,
    ),
    Case(
        "item-bare-pair",
        "spans=(4, 7) (one pair, not a tuple of pairs)",
        "ItemError: write spans=((4, 7),)",
        lambda env: SpanItem("The cat", spans=(4, 7)),
        ItemError,
        r"one bare pair; .* spans=\(\(4, 7\),\)",
        typed=True,
    ),
    Case(
        "items-a-string",
        'features("The cat sat.")',
        "ItemError: items is a single str",
        lambda env: static_features(env, "The cat sat."),
        ItemError,
        r"items is a single str",
        typed=True,
    ),
    Case(
        "item-a-string",
        'features([item, "The dog."])',
        "ItemError: item 1 expected a SpanItem, got str (wrap it)",
        lambda env: static_features(env, [GOOD, "The dog."]),
        ItemError,
        r"item 1: expected a SpanItem, got str \(wrap",
        typed=True,
    ),
    item_case(
        "item-lone-surrogate",
        'SpanItem("caf\\ud800 cat")',
        "ItemError: lone surrogate at character 3",
        lambda: SpanItem("caf\ud800 cat"),
        r"item 1: text holds a lone "
        r"surrogate .* at character 3",
    ),
    item_case(
        "item-span-outside",
        "span (4, 40) of a 12-character text",
        "ItemError: lies outside text",
        lambda: SpanItem("The cat sat.", spans=((4, 40),)),
        r"item 1: span \(4, 40\) lies outside text",
    ),
    item_case(
        "item-span-reversed",
        "span (7, 4)",
        "ItemError: end <= start",
        lambda: SpanItem("The cat sat.", spans=((7, 4),)),
        r"item 1: .*end <= start",
    ),
    item_case(
        "item-span-whitespace",
        "span over a space",
        "ItemError: covers only whitespace",
        lambda: SpanItem("The cat sat.", spans=((3, 4),)),
        r"covers only whitespace",
    ),
    item_case(
        "item-empty-text",
        'SpanItem("   ")',
        "ItemError: text is empty",
        lambda: SpanItem("   "),
        r"item 1: text is empty",
    ),
    item_case(
        "item-width-mismatch",
        "items with 1 and 2 spans in one call",
        "ItemError: pooled segments differ",
        lambda: SpanItem("The cat.", spans=((0, 3), (4, 7))),
        r"item 1: has 2 pooled segments",
    ),
    item_case(
        "item-pair-spans-alone",
        "pair_spans without text_pair",
        "ItemError: add text_pair",
        lambda: SpanItem("The cat.", pair_spans=((0, 3),)),
        r"pair_spans given without",
    ),
    Case(
        "items-none",
        "features([])",
        "ItemError: no items",
        lambda env: static_features(env, []),
        ItemError,
        r"no items were given",
    ),
]


def _parsed_name(env: Env) -> None:
    by_name = bert_features(env, [GOOD], sites=["encoder.2", "encoder.0"])
    by_site = bert_features(env, [GOOD], sites=[Site("encoder", 2), Site("encoder", 0)])
    assert torch.equal(by_name, by_site)


def _spec_string(env: Env) -> None:
    assert torch.equal(
        bert_features(env, [GOOD], sites="last"),
        bert_features(env, [GOOD], sites=sites.last(env.bert)),
    )
    assert torch.equal(
        bert_features(env, [GOOD], sites=[-1]),
        bert_features(env, [GOOD], sites=sites.last(env.bert)),
    )


SITES = [
    Case(
        "site-select-minus-99",
        'sites.select(S, "-99")',
        "SiteError: layer -99 is out of range (not 'layer -92')",
        lambda env: sites.select(env.bert, "-99"),
        SiteError,
        r"layer -99 is out of range; encoder has layers 0\.\.2, or -3\.\.-1",
    ),
    Case(
        "site-name-strings",
        'sites=["encoder.2", "encoder.0"]',
        "parsed: same features as Site objects",
        _parsed_name,
        None,
        "",
    ),
    Case(
        "site-spec-string",
        'sites="last" and sites=[-1]',
        "parsed: the last layer",
        _spec_string,
        None,
        "",
    ),
    Case(
        "site-bad-name",
        'sites=["encoder.x"]',
        "SiteError: write PART.LAYER[.STREAM]",
        lambda env: bert_features(env, [GOOD], sites=["encoder.x"]),
        SiteError,
        r"cannot parse site 'encoder\.x'",
    ),
    Case(
        "site-missing-layer",
        'Site("encoder", 9)',
        "SiteError: encoder has layers 0..2",
        lambda env: bert_features(env, [GOOD], sites=[Site("encoder", 9)]),
        SiteError,
        r"layer 9 does not exist; encoder has layers 0\.\.2",
    ),
    Case(
        "site-unknown-part",
        'Site("decoder", 1) on an encoder',
        "SiteError: unknown part",
        lambda env: bert_features(env, [GOOD], sites=[Site("decoder", 1)]),
        SiteError,
        r"unknown part 'decoder'",
    ),
    Case(
        "site-unreadable-stream",
        'Site("encoder", 1, "mlp_out") with nnsight',
        "SiteError: stream not readable here",
        lambda env: bert_features(env, [GOOD], sites=[Site("encoder", 1, "mlp_out")]),
        SiteError,
        r"stream 'mlp_out' is not readable here",
    ),
    Case(
        "site-head-missing",
        'Site("encoder", 1, "head", head=99)',
        "SiteError: head 99 does not exist, with the heads there are",
        lambda env: bert_features(env, [GOOD], sites=[Site("encoder", 1, "head", head=99)]),
        SiteError,
        r"head 99 does not exist; encoder has heads 0\.\.\d+ per layer",
    ),
    Case(
        "site-head-without-index",
        'Site("encoder", 1, "head")',
        "SiteError: a head index goes with stream 'head'",
        lambda env: Site("encoder", 1, "head"),
        SiteError,
        r"a head index goes with stream 'head' and only with it",
    ),
    Case(
        "site-head-mixed-widths",
        'sites=["encoder.1", "encoder.1.head.0"]',
        "SiteError: widths differ; separate calls",
        lambda env: bert_features(env, [GOOD], sites=["encoder.1", "encoder.1.head.0"]),
        SiteError,
        r"differ in width .* read head sites, SAE sites \(one SAE width\) and other sites in",
    ),
    Case(
        "site-head-static",
        'Site("static", 0, "head", head=0) on word vectors',
        "SiteError: no attention heads found",
        lambda env: static_features(env, [GOOD], sites=[Site("static", 0, "head", head=0)]),
        SiteError,
        r"no attention heads found in this subject's blocks",
    ),
    Case(
        "site-none",
        "sites=[]",
        "SiteError: no sites requested",
        lambda env: bert_features(env, [GOOD], sites=[]),
        SiteError,
        r"no sites requested",
    ),
    Case(
        "site-layer-string",
        'Site("encoder", "3")',
        "SiteError: layer '3' is not an integer",
        lambda env: Site("encoder", "3"),
        SiteError,
        r"layer '3' \(str\) is not an integer",
        typed=True,
    ),
    Case(
        "site-layer-float",
        "sites=[3.5]",
        "SiteError: 3.5 is not a site",
        lambda env: bert_features(env, [GOOD], sites=[3.5]),
        SiteError,
        r"3\.5 \(float\) is not a site",
        typed=True,
    ),
]
