"""MDL online code (Voita & Titov 2020): block prefixes of the shuffled training data, codelengths.

The probe trained on blocks 1..i codes block i+1; the first block is coded uniformly. The block
probes are train masks of the same grid (prefixes of one shuffled order per seed), so they train
together with every other probe; `fit_probes` adds the codelengths to its results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise

import torch
from jaxtyping import Float, Int
from torch import Tensor

from probes._grid.field_rules import Rule, check_fields

# Voita & Titov (2020), online code: timesteps 0.1 0.2 0.4 0.8 1.6 3.2 6.25 12.5 25 50 100 %
VOITA_TITOV_FRACTIONS = (0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.0625, 0.125, 0.25, 0.5, 1.0)


def _blocks_ok(f: tuple[float, ...]) -> bool:
    return len(f) >= 2 and f[-1] == 1.0 and f[0] > 0 and all(b > a for a, b in pairwise(f))


BLOCK_RULE = Rule(
    _blocks_ok,
    "at least two strictly increasing fractions in (0, 1], the last one 1.0",
    "the default Voita & Titov timesteps (0.001, ..., 0.5, 1.0)",
)


@dataclass(frozen=True)
class MDLBlocks:
    """Block boundaries as increasing fractions of the training data, the last one 1.0."""

    fractions: tuple[float, ...] = VOITA_TITOV_FRACTIONS

    def __post_init__(self) -> None:
        check_fields(self, {"fractions": BLOCK_RULE})

    @property
    def probe_fractions(self) -> tuple[float, ...]:
        """The prefixes that get a probe: all but the last (the full data codes nothing)."""
        return self.fractions[:-1]


def prefix_size(fraction: float, n_train: int) -> int:
    """Items in a train mask (a prefix of the shuffled training items): at least one."""
    return n_train if fraction >= 1.0 else max(1, min(n_train, round(fraction * n_train)))


def block_bounds(blocks: MDLBlocks, n_train: int) -> list[int]:
    """Prefix ends `[n_1, ..., n_T = n_train]`: block i holds items `n_{i-1}..n_i` of the order."""
    return [prefix_size(f, n_train) for f in blocks.fractions]


def online_codelength(
    block_bits: Float[Tensor, "probe block"], first_block: int, num_classes: int
) -> Float[Tensor, " probe"]:
    """Online codelength in bits: `first_block * log2(K)` plus the bits of every later block.

    `block_bits[:, i]` are the bits (-log2 p of the true labels) of block i+2 under the probe
    trained on blocks 1..i+1.
    """
    return first_block * math.log2(num_classes) + block_bits.sum(dim=1)


def uniform_codelength(n_train: int, num_classes: int) -> float:
    """Bits to send `n_train` labels with a uniform code over `num_classes` classes."""
    return n_train * math.log2(num_classes)


def block_items(order: Int[Tensor, " train"], blocks: MDLBlocks) -> list[Int[Tensor, " _"]]:
    """The items of each block 1..T, given the shuffled training order of one seed."""
    bounds = [0, *block_bounds(blocks, order.shape[0])]
    return [order[a:b] for a, b in pairwise(bounds)]


def grid_codelengths(
    item_bits: Float[Tensor, "probe item"],
    grid_shape: tuple[int, int, int, int],
    block_masks: list[int],
    bounds: list[int],
    orders: list[Int[Tensor, " train"]],
    num_classes: int,
) -> Float[Tensor, "seed site variant"]:
    """Online codelength of every (seed, site, variant) of a grid.

    `item_bits`: bits of every item under every probe (grid order); `block_masks[i]`: the mask
    index of the probe trained on blocks 1..i+1; `bounds`: the prefix ends; `orders[s]`: seed
    s's shuffled training order (the masks are its prefixes).
    """
    m, s, t, v = grid_shape
    bits = item_bits.view(m, s, t, v, -1)
    per_seed = []
    for seed, order in enumerate(orders):
        spans = zip(block_masks, bounds, bounds[1:])
        sums = [bits[mask, seed][..., order[a:b]].double().sum(-1) for mask, a, b in spans]
        per_seed.append(torch.stack(sums, dim=-1))  # [site, variant, block]
    block_bits = torch.stack(per_seed)
    online = online_codelength(block_bits.view(-1, len(block_masks)), bounds[0], num_classes)
    return online.view(s, t, v)


__all__ = [
    "VOITA_TITOV_FRACTIONS",
    "MDLBlocks",
    "block_bounds",
    "block_items",
    "grid_codelengths",
    "online_codelength",
    "prefix_size",
    "uniform_codelength",
]
