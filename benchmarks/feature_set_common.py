"""Pieces the FeatureSet benchmarks share: synthetic features with a planted linear signal,
written chunk by chunk with `FeatureSet.write`; a cold page cache; fits in a fresh process
(their peak RSS); the work of a grid and of L-BFGS in GEMM FLOPs."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from lingprobe.feature_set import FeatureSet

CLASSES, TYPES = 4, 2000  # word types, one class each (the control task's keys)
CHUNK_ITEMS = (
    256  # items generated per chunk while writing (its float32 noise: 138 MB at 33 x 4096)
)


@dataclass(frozen=True)
class Planted:
    """Labels, control keys and the class means planted into the features: site s carries
    `strength(s) * means[label]` on top of unit Gaussian noise, strength 0 at site 0 growing
    to `top` at the last site."""

    items: int
    sites: int
    dim: int
    labels: Tensor
    keys: Tensor
    means: Tensor  # [class, dim]
    strength: Tensor  # [site]

    def chunk(self, start: int, stop: int) -> Tensor:
        """Items `start..stop` as float16 `[item, site, dim]` (seeded by `start`)."""
        gen = torch.Generator().manual_seed(start)
        noise = torch.randn(stop - start, self.sites, self.dim, generator=gen)
        signal = self.means[self.labels[start:stop]][:, None, :] * self.strength[None, :, None]
        return noise.add_(signal).half()

    def chunks(self) -> Iterator[Tensor]:
        for start in range(0, self.items, CHUNK_ITEMS):
            yield self.chunk(start, min(self.items, start + CHUNK_ITEMS))

    def sites_in_memory(self, sites: list[int]) -> Tensor:
        """The features of `sites` as float32 `[item, site, dim]`, as a FeatureSet reads them."""
        parts = [
            self.chunk(a, min(self.items, a + CHUNK_ITEMS))[:, sites].float()
            for a in range(0, self.items, CHUNK_ITEMS)
        ]
        return torch.cat(parts)


def planted(items: int, sites: int, dim: int, top: float = 1.5) -> Planted:
    """The signal: class means of norm ~4 along random directions (at strength 1, two classes'
    means lie ~5.7 noise deviations apart; 8.5 at the last site)."""
    gen = torch.Generator().manual_seed(1234)
    type_label = torch.randint(0, CLASSES, (TYPES,), generator=gen)
    keys = torch.randint(0, TYPES, (items,), generator=gen)
    means = torch.randn(CLASSES, dim, generator=gen) * (4.0 / dim**0.5)
    strength = torch.linspace(0.0, top, sites)
    return Planted(items, sites, dim, type_label[keys], keys, means, strength)


def write_planted(folder: Path, data: Planted) -> FeatureSet:
    """The features stored as float16 by `FeatureSet.write`, one chunk at a time."""
    names = [f"layer.{s}" for s in range(data.sites)]
    return FeatureSet.write(folder, data.chunks(), names, dtype=torch.float16, overwrite=True)


def drop_page_cache(folder: Path) -> None:
    """Evict the folder's files from the page cache (clean pages; no root needed)."""
    os.sync()
    for path in folder.rglob("*"):
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def raw_read_seconds(folder: Path) -> tuple[float, int]:
    """Seconds to read every file of `folder` once with plain reads, and the bytes read."""
    total, start = 0, time.perf_counter()
    buffer = bytearray(16 * 2**20)
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            with open(path, "rb", buffering=0) as handle:
                while n := handle.readinto(buffer):
                    total += n
    return time.perf_counter() - start, total


def peak_rss_mib() -> float:
    """This process's peak resident set size so far (Linux: ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def in_fresh_process(module: str, *args: str) -> dict:
    """Run `python -m module args...` and return the JSON object its last line prints."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(
        [sys.executable, "-m", module, *args], capture_output=True, text=True, env=env, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(f"{module} {' '.join(args)} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def grid_flops(items: int, dim: int, probes: int, epochs: int, outputs: int) -> float:
    """GEMM FLOPs of a grid: forward and weight-gradient GEMMs on the train rows each epoch
    (70 % of the items), dev logits each epoch (10 %) and a final pass over every item."""
    train, dev = 0.7 * items, 0.1 * items
    return (4 * train * epochs + 2 * (dev * epochs + items)) * dim * probes * outputs


def logistic_flops(items: int, dim: int, evaluations: float, outputs: int) -> float:
    """GEMM FLOPs of L-BFGS: two GEMMs (logits, gradient) per evaluation of each probe."""
    return 4 * items * dim * outputs * evaluations
