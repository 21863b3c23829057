"""Exact products of small whole numbers: `counts @ values` by an int8 GEMM on the CPU.

The bootstrap multiplies resample counts, and the permutation test 0/1 swap flags, by per-item
features that are 0, 1 or -1 for class and label metrics (`ItemSums.whole`). Every product sum
is then a whole number of at most the number of items, which float32 holds exactly below 2^24:
the float32 GEMM is exact, and so is an int8 GEMM accumulating in int32 (`torch._int_mm`), which
gives the same float32 tensor several times faster on a CPU with VNNI/AMX. Without them (an
AVX2-only CPU) torch's int8 kernel is 20-80x slower than the float GEMM, so the int8 path is
taken only where a one-time measurement in the process (`int8_gemm_is_faster`, ~10 ms) finds it
faster; both give the same numbers. Counts above 127 (possible only in resamples of very few
items), values that are not whole, other devices, or a torch without the kernel take the float
GEMM instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import cache

import torch
from jaxtyping import Float, Shaped
from torch import Tensor

INT8_MAX = 127
EXACT_LIMIT = 1 << 24  # float32 holds every whole number below this exactly


class WholeValues:
    """`values [item, column]` ready to be multiplied by count rows, exactly."""

    def __init__(self, values: Float[Tensor, "item column"], whole: bool) -> None:
        self.values = values
        usable = (
            whole
            and values.device.type == "cpu"
            and values.dtype == torch.float32
            and values.shape[0] < EXACT_LIMIT
            and hasattr(torch, "_int_mm")
            and int8_gemm_is_faster()
        )
        self.int8 = values.to(torch.int8) if usable else None

    def product(self, counts: Shaped[Tensor, "resample item"]) -> Float[Tensor, "resample column"]:
        """`counts @ values` in the values' dtype (`counts`: floats, or int8 from `compact`)."""
        if self.int8 is not None and counts.numel() and self.int8.numel():
            small = compact(counts)
            if small.dtype == torch.int8:
                try:
                    return torch._int_mm(small, self.int8).to(self.values.dtype)
                except RuntimeError:  # a build without the CPU kernel: the float GEMM below
                    self.int8 = None
        return counts.to(self.values.dtype) @ self.values


def compact(counts: Shaped[Tensor, "resample item"]) -> Shaped[Tensor, "resample item"]:
    """Whole counts as int8 where every one fits (on the CPU): drawn once and kept so, a call's
    resample blocks take a quarter of the memory and are checked once, not per product."""
    if counts.dtype == torch.int8 or counts.device.type != "cpu" or not counts.numel():
        return counts
    low, high = counts.aminmax()
    if float(low) >= -INT8_MAX and float(high) <= INT8_MAX:
        return counts.to(torch.int8)
    return counts


@cache
def int8_gemm_is_faster() -> bool:
    """Whether `torch._int_mm` beats the float32 GEMM on this CPU, measured once per process on
    a bootstrap-shaped product (best of 3 each; the results are equal either way)."""
    if not hasattr(torch, "_int_mm"):
        return False
    gen = torch.Generator().manual_seed(0)
    counts = torch.randint(0, 3, (64, 1024), generator=gen, dtype=torch.int8)
    values = torch.randint(-1, 2, (1024, 128), generator=gen, dtype=torch.int8)
    floats = (counts.float(), values.float())

    def best(product: Callable[[], Tensor]) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            product()
            times.append(time.perf_counter() - start)
        return min(times)

    try:
        int8 = best(lambda: torch._int_mm(counts, values))
    except RuntimeError:  # a build without the CPU kernel
        return False
    return int8 < best(lambda: floats[0] @ floats[1])
