"""Bad input gets a specific exception naming the item (or value) and the fix."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import load_file

from internals import (
    ItemError,
    ModelNotFoundError,
    Site,
    SiteError,
    SpanItem,
    TokenizerError,
    load_subject,
    sites,
    store_run,
)
from tests.internals.test_align import WhitespaceTokenizer

GOOD = SpanItem("The cat sat.", spans=((4, 7),))


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (SpanItem("The cat sat.", spans=((4, 40),)), r"item 1: span \(4, 40\) lies outside text"),
        (SpanItem("   ", spans=()), r"item 1: text is empty"),
        (SpanItem("The cat sat.", spans=((7, 4),)), r"item 1: span \(7, 4\) .* end <= start"),
        (SpanItem("The cat sat.", spans=((3, 4),)), r"item 1: .* covers only whitespace"),
        (SpanItem("The cat.", spans=((0, 3), (4, 7))), r"item 1: has 2 pooled segments"),
        (SpanItem("A b.", text_pair=""), r"item 1: text_pair is empty"),
    ],
)
def test_bad_items(minilm, bad, message):
    with pytest.raises(ItemError, match=message):
        minilm.features([GOOD, bad], progress=False)


def test_no_items(minilm):
    with pytest.raises(ItemError, match="no items"):
        minilm.features([], progress=False)


def test_unknown_sites(minilm):
    with pytest.raises(
        SiteError, match=r"encoder.9: layer 9 does not exist; encoder has layers 0..6"
    ):
        minilm.features([GOOD], [Site("encoder", 9)], progress=False)
    with pytest.raises(SiteError, match="unknown part 'decoder'"):
        minilm.features([GOOD], [Site("decoder", 1)], progress=False)
    with pytest.raises(SiteError, match="stream 'mlp_out' is not readable here"):
        minilm.features([GOOD], [Site("encoder", 1, "mlp_out")], progress=False)


def test_tokenizer_without_offsets_at_load(minilm):
    with pytest.raises(TokenizerError, match="fast tokenizer"):
        load_subject(minilm.model, tokenizer=WhitespaceTokenizer())


def test_unknown_model_offline_fails_fast():
    with pytest.raises(ModelNotFoundError, match="cannot load 'no-such-org/no-such-model'"):
        load_subject("no-such-org/no-such-model")
    with pytest.raises(ModelNotFoundError, match="no such vectors file"):
        load_subject("glove:/nonexistent/vectors.txt")


def test_error_mid_run_keeps_the_store_and_names_the_global_item(minilm, tmp_path, monkeypatch):
    monkeypatch.setattr(store_run, "WINDOW_BYTES", 1)  # one shard per compute call: the shards
    # computed before the failing window are kept
    long_text = "word " * 600 + "target"
    items = [SpanItem(f"Item {i} is fine.", spans=((0, 4),)) for i in range(5)]
    items.append(SpanItem(long_text, spans=((len(long_text) - 6, len(long_text)),)))
    with pytest.raises(ItemError, match=r"item 5: .*truncated"):
        minilm.features(
            items,
            sites.last(minilm),
            long_texts="truncate",
            store=tmp_path,
            shard_size=2,
            progress=False,
        )
    shards = sorted(p.name for p in tmp_path.rglob("shard-*.safetensors"))
    assert shards == ["shard-000000.safetensors", "shard-000001.safetensors"]
    fresh = minilm.features(items[:4], sites.last(minilm), progress=False)[:, 0]
    stored = [load_file(p)["features"] for p in sorted(tmp_path.rglob("shard-*.safetensors"))]
    torch.testing.assert_close(torch.cat(stored), fresh, rtol=1e-5, atol=1e-5)
