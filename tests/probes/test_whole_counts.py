"""The int8 path of `counts @ values` gives exactly the float GEMM's numbers."""

from __future__ import annotations

import torch

from probes._grid.whole_counts import WholeValues, compact


def test_whole_products_equal_the_float_gemm() -> None:
    gen = torch.Generator().manual_seed(0)
    values = torch.randint(-1, 2, (3000, 70), generator=gen).float()
    counts = torch.randint(0, 9, (40, 3000), generator=gen).float()
    fast = WholeValues(values, whole=True)
    assert fast.int8 is not None
    out = fast.product(counts)
    assert out.dtype == torch.float32
    assert torch.equal(out, counts @ values)


def test_large_counts_and_fractional_values_take_the_float_gemm() -> None:
    gen = torch.Generator().manual_seed(1)
    values = torch.randint(0, 2, (50, 6), generator=gen).float()
    counts = torch.randint(0, 3, (4, 50), generator=gen).float()
    counts[0, 0] = 300.0  # beyond int8: must not wrap around
    assert torch.equal(WholeValues(values, whole=True).product(counts), counts @ values)
    halves = values / 2
    slow = WholeValues(halves, whole=False)
    assert slow.int8 is None
    assert torch.equal(slow.product(counts), counts @ halves)


def test_compacted_counts_give_the_same_products() -> None:
    gen = torch.Generator().manual_seed(2)
    values = torch.randint(-1, 2, (500, 30), generator=gen).float()
    counts = torch.randint(0, 6, (64, 500), generator=gen).float()
    small = compact(counts)
    assert small.dtype == torch.int8 and torch.equal(small.float(), counts)
    assert torch.equal(WholeValues(values, whole=True).product(small), counts @ values)
    halves = values / 2  # not whole: int8 counts are widened for the float GEMM
    assert torch.equal(WholeValues(halves, whole=False).product(small), counts @ halves)
    counts[3, 7] = 200.0
    assert compact(counts).dtype == torch.float32  # beyond int8: kept as they are
