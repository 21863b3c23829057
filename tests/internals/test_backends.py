"""transformer-lens and nnsight backends read the same numbers; sites follow hidden_states."""

from __future__ import annotations

import pytest
import torch

from internals import Site, SpanItem, load_subject, sites
from internals.sites import parse_site, select
from tests.tiny_models import random_llama

ITEMS = [
    SpanItem("The cat sat on the mat.", spans=((4, 7),)),
    SpanItem("Dogs bark loudly at night, every night.", spans=((0, 4),)),
    SpanItem("Short one.", spans=((6, 9),)),
]


@pytest.mark.slow
def test_lens_equals_nnsight_on_minilm(minilm):
    lens = load_subject("sentence-transformers/all-MiniLM-L6-v2", backend="lens")
    assert lens.backend.name == "lens" and minilm.backend.name == "nnsight"
    every = sites.every_layer(minilm)
    torch.testing.assert_close(
        lens.features(ITEMS, every, progress=False),
        minilm.features(ITEMS, every, progress=False),
        rtol=1e-4,
        atol=1e-5,
    )
    extra = lens.features(
        ITEMS, [Site("encoder", 2, "attn_out"), Site("encoder", 2, "mlp_out")], progress=False
    )
    assert extra.shape == (3, 2, 384) and not torch.allclose(extra[:, 0], extra[:, 1])


def test_lens_equals_nnsight_on_random_llama(bpe_tokenizer):
    model = random_llama(bpe_tokenizer)
    sight = load_subject(model, tokenizer=bpe_tokenizer)
    lens = load_subject(model, tokenizer=bpe_tokenizer, backend="lens")
    every = sites.every_layer(sight)
    torch.testing.assert_close(
        lens.features(ITEMS, every, progress=False),
        sight.features(ITEMS, every, progress=False),
        rtol=1e-4,
        atol=1e-5,
    )


def test_site_helpers(minilm):
    assert [s.name for s in sites.every_layer(minilm)] == [f"encoder.{k}" for k in range(7)]
    assert sites.last(minilm) == [Site("encoder", 6)]
    assert select(minilm, "0,3,-1") == [Site("encoder", 0), Site("encoder", 3), Site("encoder", 6)]
    assert select(minilm, "last") == sites.last(minilm)
    assert parse_site("decoder.5.mlp_out") == Site("decoder", 5, "mlp_out")
    assert str(Site("encoder", 2)) == "encoder.2"
