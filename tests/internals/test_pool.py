"""`pool_spans` equals a Python loop over spans, for every pooling."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from internals import TokenSegments, pool_spans


def loop_pool(hidden, ranges, how):
    out = []
    for b, s, e in ranges.tolist():
        vecs = hidden[b, s:e]
        out.append(
            {"mean": vecs.mean(0), "max": vecs.max(0).values, "first": vecs[0], "last": vecs[-1]}[
                how
            ]
        )
    return torch.stack(out)


@st.composite
def batches(draw):
    batch = draw(st.integers(1, 4))
    tokens = draw(st.integers(1, 12))
    dim = draw(st.integers(1, 6))
    n = draw(st.integers(1, 10))
    ranges = []
    for _ in range(n):
        b = draw(st.integers(0, batch - 1))
        s = draw(st.integers(0, tokens - 1))
        e = draw(st.integers(s + 1, tokens))
        ranges.append((b, s, e))
    seed = draw(st.integers(0, 2**16))
    hidden = torch.randn(batch, tokens, dim, generator=torch.Generator().manual_seed(seed))
    return hidden, torch.tensor(ranges)


@pytest.mark.parametrize("how", ["mean", "max", "first", "last"])
@settings(max_examples=60, deadline=None)
@given(data=batches())
def test_pool_matches_loop(how, data):
    hidden, ranges = data
    segments = TokenSegments.from_ranges(ranges, hidden.shape[1])
    got = pool_spans(hidden, segments, how)
    torch.testing.assert_close(got, loop_pool(hidden, ranges, how), rtol=1e-6, atol=1e-6)


def test_non_contiguous_segment_pools_its_positions():
    hidden = torch.arange(24, dtype=torch.float32).view(1, 6, 4)
    segments = TokenSegments(torch.tensor([0, 2, 5]), torch.tensor([2, 1]))
    got = pool_spans(hidden, segments, "mean")
    torch.testing.assert_close(got[0], (hidden[0, 0] + hidden[0, 2]) / 2)
    torch.testing.assert_close(got[1], hidden[0, 5])


def test_empty_range_is_rejected():
    with pytest.raises(ValueError, match="end <= start"):
        TokenSegments.from_ranges(torch.tensor([[0, 3, 3]]), 5)


def test_unknown_pooling_is_rejected():
    segments = TokenSegments.from_ranges(torch.tensor([[0, 0, 2]]), 3)
    # beartype rejects the Literal first when checking is on; plain runs hit the ValueError
    with pytest.raises((ValueError, TypeError)):
        pool_spans(torch.zeros(1, 3, 2), segments, "median")  # type: ignore[arg-type]
