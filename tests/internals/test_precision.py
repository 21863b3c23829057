"""bfloat16 / float16 extraction: float32 pooling accumulators, float32 features."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from internals import load_subject, sites
from internals.packaged import MINILM
from internals.pool import TokenSegments, pool_spans
from tests.internals.test_equivalence import ITEMS

# Measured on MiniLM (7 sites, relative error per site): bfloat16 0.004-0.011, float16
# 0.0005-0.0013; cosine >= 0.9999 for every item.
RELATIVE_ERROR = {torch.bfloat16: 0.03, torch.float16: 0.005}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("how", ["mean", "max", "first", "last"])
def test_half_activations_pool_in_float32(dtype, how):
    generator = torch.Generator().manual_seed(0)
    hidden = torch.randn(3, 20, 8, generator=generator).to(dtype)
    ranges = torch.tensor([[0, 1, 5], [1, 0, 20], [2, 7, 8], [2, 9, 19]])
    segments = TokenSegments.from_ranges(ranges, 20)
    got = pool_spans(hidden, segments, how)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, pool_spans(hidden.float(), segments, how), rtol=0, atol=0)


def test_a_mean_over_a_long_span_keeps_float32_precision():
    """8,192 bfloat16 tokens: pooled in bfloat16 the mean is off by >1e-3, in float32 by <1e-5."""
    generator = torch.Generator().manual_seed(0)
    hidden = (3.3 + 0.1 * torch.randn(1, 8192, 16, generator=generator)).to(torch.bfloat16)
    segments = TokenSegments.from_ranges(torch.tensor([[0, 0, 8192]]), 8192)
    exact = hidden.double().mean(dim=1)
    ours = pool_spans(hidden, segments, "mean").double()
    flat = hidden.reshape(-1, 16)
    in_bfloat16 = F.embedding_bag(segments.positions, flat, segments.offsets, mode="mean")
    naive = in_bfloat16.double()
    assert (ours - exact).abs().max() < 1e-5
    assert (naive - exact).abs().max() > 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_precision_minilm_features_stay_near_float32(minilm, dtype):
    half = load_subject(MINILM, dtype=dtype)
    chosen = getattr(torch, dtype)
    assert next(half.model.parameters()).dtype == chosen
    assert half.fingerprint != minilm.fingerprint
    every = sites.every_layer(minilm)
    want = minilm.features(ITEMS, every, progress=False)
    got = half.features(ITEMS, every, progress=False)
    assert got.dtype == torch.float32
    for k in range(len(every)):
        error = (got[:, k] - want[:, k]).norm() / want[:, k].norm()
        assert error.item() <= RELATIVE_ERROR[chosen]
    assert F.cosine_similarity(got.flatten(0, 1), want.flatten(0, 1), dim=-1).min() > 0.999


def test_bad_dtype_is_refused():
    with pytest.raises(ValueError, match="dtype='int8'"):
        load_subject(MINILM, dtype="int8")
