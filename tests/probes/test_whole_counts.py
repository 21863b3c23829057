"""The int8 path of `counts @ values` gives exactly the float GEMM's numbers."""

from __future__ import annotations

import pytest
import torch

from probes._grid import whole_counts
from probes._grid.whole_counts import WholeValues, compact, int8_gemm_is_faster


@pytest.fixture
def int8_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The int8 kernel taken whatever this CPU's measurement says (it is slower without VNNI)."""
    monkeypatch.setattr(whole_counts, "int8_gemm_is_faster", lambda: True)


def test_whole_products_equal_the_float_gemm(int8_path: None) -> None:
    gen = torch.Generator().manual_seed(0)
    values = torch.randint(-1, 2, (3000, 70), generator=gen).float()
    counts = torch.randint(0, 9, (40, 3000), generator=gen).float()
    fast = WholeValues(values, whole=True)
    assert fast.int8 is not None
    out = fast.product(counts)
    assert out.dtype == torch.float32
    assert torch.equal(out, counts @ values)


def test_large_counts_and_fractional_values_take_the_float_gemm(int8_path: None) -> None:
    gen = torch.Generator().manual_seed(1)
    values = torch.randint(0, 2, (50, 6), generator=gen).float()
    counts = torch.randint(0, 3, (4, 50), generator=gen).float()
    counts[0, 0] = 300.0  # beyond int8: must not wrap around
    assert torch.equal(WholeValues(values, whole=True).product(counts), counts @ values)
    halves = values / 2
    slow = WholeValues(halves, whole=False)
    assert slow.int8 is None
    assert torch.equal(slow.product(counts), counts @ halves)


def test_compacted_counts_give_the_same_products(int8_path: None) -> None:
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


def test_the_int8_kernel_is_taken_only_where_it_measured_faster(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gen = torch.Generator().manual_seed(3)
    values = torch.randint(-1, 2, (800, 20), generator=gen).float()
    counts = compact(torch.randint(0, 4, (16, 800), generator=gen).float())
    monkeypatch.setattr(whole_counts, "int8_gemm_is_faster", lambda: False)
    slow_cpu = WholeValues(values, whole=True)
    assert slow_cpu.int8 is None  # an AVX2-only CPU: the float GEMM, the same numbers
    assert torch.equal(slow_cpu.product(counts), counts.float() @ values)
    assert isinstance(int8_gemm_is_faster(), bool)
    assert int8_gemm_is_faster.cache_info().currsize == 1  # measured once per process
