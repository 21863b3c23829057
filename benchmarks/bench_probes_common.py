"""Shared pieces of the probes benchmarks: UPOS-sized synthetic features, machine bounds, timers.

Not a benchmark itself (no tests): `bench_probes_train.py` and `bench_probes_logistic.py`
import it. The machine is shared, so every comparison is timed in the same run and printed as a
ratio, with wall and CPU seconds.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

import torch
from threadpoolctl import threadpool_limits
from torch import Tensor

T = TypeVar("T")

# A UPOS-sized sweep (issue #3): 13 sites x 5 seeds x {task, control}, 20,000 items, dim 384.
N_ITEMS, N_SITES, DIM, N_CLASSES, N_TYPES = 20_000, 13, 384, 17, 4_000


@dataclass
class UposLike:
    """Features `[item, site, dim]`, Zipfian classes, word types (control-task keys)."""

    feats: Tensor
    labels: Tensor
    keys: Tensor


def upos_like(seed: int = 0) -> UposLike:
    """Zipfian word types with one class each (10% ambiguous occurrences); the class signal
    follows a layer curve over the sites, on top of Gaussian noise."""
    gen = torch.Generator().manual_seed(seed)
    type_p = 1 / torch.arange(1, N_TYPES + 1, dtype=torch.float64)
    keys = torch.multinomial(type_p, N_ITEMS, replacement=True, generator=gen)
    class_p = 1 / torch.arange(1, N_CLASSES + 1, dtype=torch.float64) ** 0.8
    labels = torch.multinomial(class_p, N_TYPES, replacement=True, generator=gen)[keys]
    ambiguous = torch.rand(N_ITEMS, generator=gen) < 0.1
    labels[ambiguous] = torch.randint(0, N_CLASSES, (int(ambiguous.sum()),), generator=gen)
    class_dir = torch.randn(N_CLASSES, DIM, generator=gen) / math.sqrt(DIM)
    feats = torch.randn(N_ITEMS, N_SITES, DIM, generator=gen)
    for site in range(N_SITES):
        strength = 1.0 + 2.0 * math.sin(math.pi * site / (N_SITES - 1))
        feats[:, site] += strength * class_dir[labels]
    return UposLike(feats, labels, keys)


@dataclass
class Timed:
    """Wall and process-CPU seconds of one call, and its result."""

    wall: float
    cpu: float
    result: object


def timed(fn: Callable[[], T]) -> Timed:
    """Run `fn` once."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return Timed(time.perf_counter() - wall, time.process_time() - cpu, out)


@contextmanager
def threads(n: int) -> Iterator[None]:
    """torch intra-op threads and BLAS/OpenMP pools (sklearn's) limited to `n` inside."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        with threadpool_limits(n):
            yield
    finally:
        torch.set_num_threads(before)


def load() -> str:
    """The 1-minute load average, to read timings against (the machine is shared)."""
    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"


def fastest(fn: Callable[[], object], repeats: int) -> tuple[Timed, list[float]]:
    """The fastest of `repeats` runs of `fn` (with its result), and every run's wall seconds."""
    runs = [timed(fn) for _ in range(repeats)]
    return min(runs, key=lambda t: t.wall), [t.wall for t in runs]


def best_of(fn: Callable[[], object], repeats: int) -> float:
    """Fastest wall time of `repeats` runs, after one untimed run."""
    fn()
    return fastest(fn, repeats)[0].wall


@dataclass
class MachineBounds:
    """Measured here, now: streaming read bandwidth and matmul throughput (float32/float64)."""

    read_gbs: float
    gflops32: float
    gflops64: float

    def __str__(self) -> str:
        return (
            f"machine: read {self.read_gbs:.1f} GB/s, matmul {self.gflops32:.0f} GFLOP/s float32,"
            f" {self.gflops64:.0f} GFLOP/s float64 ({torch.get_num_threads()} threads)"
        )

    def best(self, other: MachineBounds) -> MachineBounds:
        """The higher of two measurements of each bound (the machine's peak drifts on a shared
        host: the same machine measured 135-198 GFLOP/s float32 on one day)."""
        return MachineBounds(
            max(self.read_gbs, other.read_gbs),
            max(self.gflops32, other.gflops32),
            max(self.gflops64, other.gflops64),
        )


def measure_bounds() -> MachineBounds:
    """Best of a few runs: sum over 512 MB, 2048^3 GEMMs."""
    big = torch.ones(128 * 1024 * 1024)
    read = big.numel() * 4 / best_of(big.sum, 5) / 1e9
    flops = []
    for dtype in (torch.float32, torch.float64):
        a = torch.randn(2048, 2048, dtype=dtype)
        flops.append(2 * 2048**3 / best_of(lambda a=a: a @ a, 5) / 1e9)
    return MachineBounds(read, flops[0], flops[1])
