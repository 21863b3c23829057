"""The random draws of the bootstrap and of the permutation test, as item-count matrices.

A bootstrap resample draws n items with replacement: row b of `counts` says how often each
test item was drawn (what `scipy.stats.bootstrap(..., paired=True)` draws as indices, here
counted). A swap pattern of the paired permutation test says, per item, whether the two probes'
outcomes trade places (0/1). Draws are made on the CPU from a generator keyed by the seed, in
blocks of a fixed size, so they depend only on (seed, number of items, resample) — not on the
device, the memory or the probes — and two runs on the same test items get the same resamples.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import torch
from jaxtyping import Float, Int
from torch import Tensor

from probes._grid.streams import keyed_generator
from probes.errors import ProbeConfigError

BLOCK = 128  # resamples per block (fixed, so the draws never depend on memory)
MAX_EXACT_ITEMS = 20  # at most 2^20 swap patterns are enumerated exactly


@dataclass(frozen=True)
class ItemResamples:
    """`n_resamples` bootstrap resamples of `n_items` test items, drawn from `seed`; or given
    explicitly as `indices` `[resample, item]` (e.g. scipy's draws, to compare with it)."""

    n_items: int
    n_resamples: int
    seed: int = 0
    indices: Int[Tensor, "resample item"] | None = None

    def __post_init__(self) -> None:
        if self.n_resamples < 1 or self.n_items < 1:
            raise ProbeConfigError(
                f"n_resamples={self.n_resamples}, n_items={self.n_items}: the bootstrap needs"
                " at least one resample of at least one test item."
            )
        if self.indices is not None and tuple(self.indices.shape) != (
            self.n_resamples,
            self.n_items,
        ):
            raise ProbeConfigError(
                f"indices: shape {tuple(self.indices.shape)}; give [n_resamples, n_items] ="
                f" [{self.n_resamples}, {self.n_items}] item indices."
            )

    @classmethod
    def from_indices(cls, indices: Int[Tensor, "resample item"]) -> ItemResamples:
        """Resamples given as item indices (each row: the n items drawn)."""
        return cls(indices.shape[1], indices.shape[0], 0, indices.cpu())

    def blocks(
        self, device: torch.device | str = "cpu"
    ) -> Iterator[Float[Tensor, "resample item"]]:
        """Item counts of consecutive blocks of resamples, float32 on `device`."""
        gen = keyed_generator("item-bootstrap", self.seed)
        n = self.n_items
        for start in range(0, self.n_resamples, BLOCK):
            size = min(BLOCK, self.n_resamples - start)
            if self.indices is None:
                idx = torch.randint(0, n, (size, n), generator=gen)
            else:
                idx = self.indices[start : start + size].long()
            counts = torch.zeros(size, n).scatter_add_(1, idx, torch.ones(1, 1).expand(size, n))
            yield counts.to(device)


@dataclass(frozen=True)
class SwapPatterns:
    """Swap patterns of a paired permutation test over `n_items` items.

    Like `scipy.stats.permutation_test(permutation_type="samples")` with two samples: when
    `n_resamples` ≥ 2^n_items every pattern is enumerated once (`exact`, the identity
    included); otherwise `n_resamples` random patterns are drawn from `seed`.
    """

    n_items: int
    n_resamples: int
    seed: int = 0

    @property
    def exact(self) -> bool:
        """Whether every one of the 2^n patterns is enumerated."""
        return self.n_items <= MAX_EXACT_ITEMS and self.n_resamples >= 2**self.n_items

    @property
    def count(self) -> int:
        """How many patterns `blocks` yields."""
        return 2**self.n_items if self.exact else self.n_resamples

    def blocks(
        self, device: torch.device | str = "cpu"
    ) -> Iterator[Float[Tensor, "resample item"]]:
        """0/1 swap flags of consecutive blocks of patterns, float32 on `device`."""
        n = self.n_items
        gen = keyed_generator("item-swap", self.seed)
        bits = 2 ** torch.arange(n)
        for start in range(0, self.count, BLOCK):
            size = min(BLOCK, self.count - start)
            if self.exact:
                codes = torch.arange(start, start + size)[:, None]
                flags = (codes & bits).ne(0)
            else:
                flags = torch.randint(0, 2, (size, n), generator=gen).bool()
            yield flags.float().to(device)


def seed_counts(
    n_seeds: int, n_resamples: int, seed: int = 0
) -> Float[Tensor, "resample probe_seed"]:
    """How often each of `n_seeds` training seeds is drawn in each resample (with replacement)."""
    gen = keyed_generator("seed-bootstrap", seed)
    idx = torch.randint(0, n_seeds, (n_resamples, n_seeds), generator=gen)
    return torch.zeros(n_resamples, n_seeds).scatter_add_(1, idx, torch.ones(idx.shape))
