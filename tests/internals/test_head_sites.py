"""Head sites: names, checks, and the heads' outputs against one HF forward per text.

The reference hooks the attention's output projection with plain torch during a forward of one
text, pools its input and output over each span's tokens (`naive_token_lists`), and compares:
each head site equals its slice of the pooled input, and the head sites side by side, multiplied
by the projection (plus bias), equal the pooled projection output, which is `attn_out` (the
attention's contribution to the residual stream; BERT normalises it after the residual add).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from internals import Site, SpanItem, load_subject, sites
from internals.errors import ItemError, SiteError
from internals.layout import get_module
from internals.sites import parse_site
from internals.span_attention import span_attention
from tests.internals.reference import naive_token_lists
from tests.tiny_models import random_llama

ITEMS = [
    SpanItem("The cat sat on the mat.", spans=((4, 7),)),
    SpanItem("Dogs bark loudly at night, every night.", spans=((11, 24),)),
    SpanItem("Short one.", spans=((0, 5),)),
]


def hooked_projection(subject, items, layer: int):
    """Per item, the output projection's input and output at `layer` (block layer - 1), mean
    over the span's tokens, from a plain HF forward of the item's text alone."""
    part = next(iter(subject.layout.parts))
    heads = subject.backend.heads[part]
    block = get_module(subject.model, subject.layout.parts[part].layers)[layer - 1]
    projection = block.get_submodule(heads.projection)
    seen = {}

    def hook(module, args, output):
        seen["in"], seen["out"] = args[0], output

    handle = projection.register_forward_hook(hook)
    inputs, outputs = [], []
    try:
        for item in items:
            ids, (tokens,) = naive_token_lists(subject.tokenizer, item.text, item.spans)
            with torch.no_grad():
                subject.model(input_ids=torch.tensor([ids]))
            inputs.append(seen["in"][0, tokens].mean(0))
            outputs.append(seen["out"][0, tokens].mean(0))
    finally:
        handle.remove()
    return torch.stack(inputs), torch.stack(outputs), projection


def check_heads_against_projection(subject, layer: int, atol: float) -> None:
    n_heads = subject.part_heads[next(iter(subject.part_layers))]
    heads = sites.every_head(subject, layers=[layer])
    assert len(heads) == n_heads
    got = subject.features(ITEMS, heads, progress=False)  # [item, head, head_dim]
    want_in, want_out, projection = hooked_projection(subject, ITEMS, layer)
    assert got.shape == (len(ITEMS), n_heads, want_in.shape[1] // n_heads)
    torch.testing.assert_close(got.flatten(1).to(want_in.dtype), want_in, rtol=0, atol=atol)
    mixed = F.linear(got.flatten(1).to(want_in.dtype), projection.weight, projection.bias)
    torch.testing.assert_close(mixed, want_out, rtol=0, atol=atol)


@pytest.mark.parametrize("layer", [1, 6])
def test_minilm_heads_times_projection_equal_attn_out(minilm, layer):
    check_heads_against_projection(minilm, layer, atol=1e-5)


@pytest.mark.slow
def test_smollm2_heads_times_projection_equal_attn_out(smollm2_dir):
    # float64, as in test_equivalence: a padded batch and a one-text forward round alike there
    subject = load_subject(str(smollm2_dir), dtype=torch.float64)
    assert subject.part_heads == {"decoder": 9} and subject.site_dim(Site("decoder", 1)) == 576
    assert subject.site_dim(Site("decoder", 1, "head", head=0)) == 64
    for layer in (1, 15, 30):
        check_heads_against_projection(subject, layer, atol=1e-5)


@pytest.mark.slow
def test_lens_heads_equal_nnsight_heads_on_minilm(minilm):
    lens = load_subject("sentence-transformers/all-MiniLM-L6-v2", backend="lens")
    heads = sites.every_head(minilm)
    assert lens.part_heads == minilm.part_heads == {"encoder": 12}
    torch.testing.assert_close(
        lens.features(ITEMS, heads, progress=False),
        minilm.features(ITEMS, heads, progress=False),
        rtol=1e-4,
        atol=1e-5,
    )


def test_lens_heads_equal_nnsight_heads_on_a_grouped_query_decoder(bpe_tokenizer):
    model = random_llama(bpe_tokenizer)  # 4 query heads over 2 key-value groups
    sight = load_subject(model, tokenizer=bpe_tokenizer)
    lens = load_subject(model, tokenizer=bpe_tokenizer, backend="lens")
    heads = sites.every_head(sight)
    assert len(heads) == 2 * 4 and sight.site_dim(heads[0]) == 16
    torch.testing.assert_close(
        lens.features(ITEMS, heads, progress=False),
        sight.features(ITEMS, heads, progress=False),
        rtol=1e-4,
        atol=1e-5,
    )


def test_head_site_names_round_trip(minilm):
    every = sites.every_head(minilm)
    assert len(every) == 6 * 12 and every[0] == Site("encoder", 1, "head", head=0)
    assert all(parse_site(site.name) == site for site in every)
    assert Site("decoder", 5, "head", head=3).name == "decoder.5.head.3"
    assert sites.resolve(minilm, ["encoder.-1.head.2"]) == [Site("encoder", 6, "head", head=2)]
    assert [s.name for s in sites.every_head(minilm, layers=[-1])][:2] == [
        "encoder.6.head.0",
        "encoder.6.head.1",
    ]


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: Site("encoder", 2, "head"), "a head index goes with stream 'head'"),
        (lambda: Site("encoder", 2, head=1), "a head index goes with stream 'head'"),
        (lambda: Site("encoder", 2, "head", head=-1), "numbered from 0"),
        (lambda: parse_site("encoder.2.head.x"), "PART.LAYER.head.HEAD"),
    ],
)
def test_bad_head_sites_are_refused(make, words):
    with pytest.raises(SiteError, match=words):
        make()


def test_heads_the_subject_lacks_are_refused(minilm):
    with pytest.raises(SiteError, match=r"head 12 does not exist; encoder has heads 0\.\.11"):
        minilm.features(ITEMS, ["encoder.2.head.12"], progress=False)
    with pytest.raises(SiteError, match=r"layers 1\.\.6"):
        minilm.features(ITEMS, ["encoder.0.head.1"], progress=False)
    with pytest.raises(SiteError, match="separate calls"):
        minilm.features(ITEMS, ["encoder.2", "encoder.2.head.1"], progress=False)
    glove = load_subject("glove:6B.50d")
    with pytest.raises(SiteError, match="no attention heads"):
        sites.every_head(glove)
    with pytest.raises(SiteError, match="no attention heads found"):
        glove.features(ITEMS, [Site("static", 0, "head", head=0)], progress=False)


def test_head_sites_are_stored_apart(minilm, tmp_path):
    """The store keys each head by its site name: two heads never share a shard."""
    two = [Site("encoder", 3, "head", head=0), Site("encoder", 3, "head", head=1)]
    first = minilm.features(ITEMS, two, store=tmp_path, progress=False)
    assert not torch.equal(first[:, 0], first[:, 1])
    again = minilm.features(ITEMS, two[::-1], store=tmp_path, progress=False)
    torch.testing.assert_close(again, first.flip(1), rtol=0, atol=0)
    folders = {p.name for p in tmp_path.glob("*/*/encoder.*")}
    assert folders == {"encoder.3.head.0", "encoder.3.head.1"}


EDGES = [
    SpanItem("The cat sat on the mat.", spans=((4, 7), (19, 22))),
    SpanItem("The cat sat on the mat.", spans=((19, 22), (4, 7))),  # same text, swapped spans
    SpanItem("Dogs bark loudly at night, every night.", spans=((0, 4), (11, 24))),
]


def naive_span_attention(subject, items, chosen):
    """One eager forward per item, loops over heads, span pairs, queries and keys."""
    model = subject.model
    before = model.config._attn_implementation
    model.set_attn_implementation("eager")
    rows = []
    try:
        for item in items:
            ids, token_lists = naive_token_lists(subject.tokenizer, item.text, item.spans)
            with torch.no_grad():
                attentions = model(input_ids=torch.tensor([ids]), output_attentions=True).attentions
            per_site = []
            for site in chosen:
                pattern = attentions[site.layer - 1][0, site.head]
                values = []
                for a in token_lists:
                    for b in token_lists:
                        values.append(sum(sum(pattern[q, k] for k in b) for q in a) / len(a))
                per_site.append(torch.stack(values))
            rows.append(torch.stack(per_site))
    finally:
        model.set_attn_implementation(before)
    return torch.stack(rows).float()


def test_span_attention_equals_a_loop_on_minilm(minilm):
    chosen = sites.every_head(minilm, layers=[1, 6])
    got = span_attention(minilm, EDGES, chosen)
    assert got.shape == (3, 24, 4)
    torch.testing.assert_close(got, naive_span_attention(minilm, EDGES, chosen), rtol=0, atol=1e-6)
    assert minilm.model.config._attn_implementation == "sdpa"  # restored
    # item 1 asks for item 0's spans in the other order: the same square, rows and columns swapped
    torch.testing.assert_close(got[1].view(24, 2, 2), got[0].view(24, 2, 2).flip(1, 2))


def test_span_attention_is_causal_on_a_decoder(bpe_tokenizer):
    subject = load_subject(random_llama(bpe_tokenizer), tokenizer=bpe_tokenizer)
    chosen = sites.every_head(subject)
    got = span_attention(subject, EDGES[:1], chosen)  # spans in reading order: cat, mat
    torch.testing.assert_close(
        got, naive_span_attention(subject, EDGES[:1], chosen), atol=1e-6, rtol=0
    )
    assert bool((got[0, :, 1] == 0).all())  # cat never attends to the later mat
    words = span_attention(subject, ITEMS, chosen)  # one span: one value, in (0, 1]
    assert words.shape == (3, len(chosen), 1) and bool(((words > 0) & (words <= 1)).all())


def test_span_attention_refusals(minilm):
    with pytest.raises(SiteError, match="not a head site"):
        span_attention(minilm, EDGES, ["encoder.3"])
    with pytest.raises(ItemError, match="text_pair"):
        span_attention(minilm, [SpanItem("A cat.", text_pair="A dog.")], ["encoder.1.head.0"])
