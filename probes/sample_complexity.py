"""Surplus description length and ε-sample complexity (Whitney et al. 2020) from the MDL grid.

Whitney, Song, Brandfonbrener, Altosaar and Cho (2020), *Evaluating representations by the
complexity of learning low-loss predictors*, judge a representation by its loss-data curve
L(n), the expected test loss of a predictor trained on n items:

* surplus description length `SDL_ε = Σ_{n≥0} max(0, L(n) − ε)`: the bits spent above the
  tolerance ε while learning (infinite if the loss never reaches ε);
* ε-sample complexity `εSC = min{n : L(n) ≤ ε}` (none if it never does).

Here the curve is measured at the MDL grid's train sizes (`probes.mdl`: the probes trained on
the prefixes n_1 < ... < n_T of each seed's shuffled training items, one optimisation with
train masks): L(n_i) is the mean test-split cross-entropy in bits per item of the probe trained
on n_i items, and L(n_0 = 0) = log2 K, the uniform code (a predictor that has seen nothing), as
in the online code. Discretisation: the curve is a step function, L(n) = L(n_i) for
n_i ≤ n < n_{i+1}, and L(n) = L(n_T) beyond the data, so

    SDL_ε = Σ_{i=0}^{T−1} (n_{i+1} − n_i) · max(0, L(n_i) − ε)   if L(n_T) ≤ ε, else +inf
    εSC   = the smallest grid size n_i (i ≥ 0) with L(n_i) ≤ ε, else none.

With the loss measured on the next block instead of the test items, SDL_0 is the online
codelength; the grid resolves εSC only to the interval (n_{i−1}, n_i].
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise

import polars as pl
import torch
from jaxtyping import Float, Int
from torch import Tensor

from probes.errors import ProbeConfigError
from probes.grid import ProbeLayout
from probes.mdl import MDLBlocks, block_bounds
from probes.splits import TEST, TRAIN

SIZES, LOSSES = "train_sizes", "test_bits"


def surplus_description_length(
    sizes: Sequence[int], losses: Float[Tensor, "*batch point"], epsilon: float
) -> Float[Tensor, "*batch"]:
    """SDL_ε in bits of step curves with points `(sizes[i], losses[..., i])` (sizes increasing,
    the first one 0); +inf where the last loss is above ε, NaN where a loss is NaN."""
    check_curve(sizes, losses.shape[-1])
    steps = torch.tensor([b - a for a, b in pairwise(sizes)], dtype=torch.float64)
    surplus = (losses.double() - epsilon).clamp(min=0)
    sdl = (surplus[..., :-1] * steps).sum(-1)
    sdl = torch.where(losses[..., -1] > epsilon, torch.inf, sdl)
    return torch.where(losses.isnan().any(-1), torch.nan, sdl)


def epsilon_sample_complexity(
    sizes: Sequence[int], losses: Float[Tensor, "*batch point"], epsilon: float
) -> Float[Tensor, "*batch"]:
    """εSC: the smallest size whose loss is at most ε; +inf where none is, NaN where a loss
    is NaN."""
    check_curve(sizes, losses.shape[-1])
    at = torch.tensor(list(sizes), dtype=torch.float64)
    reached = losses.double() <= epsilon
    first = torch.where(reached, at, torch.inf).amin(-1)
    return torch.where(losses.isnan().any(-1), torch.nan, first)


def check_curve(sizes: Sequence[int], points: int) -> None:
    """Sizes: strictly increasing from 0, one per loss."""
    ok = len(sizes) == points and len(sizes) >= 1 and sizes[0] == 0
    if not ok or any(b <= a for a, b in pairwise(sizes)):
        raise ProbeConfigError(
            f"train sizes {list(sizes)} for {points} losses: give strictly increasing sizes"
            " starting at 0, one per loss."
        )


def grid_test_losses(
    item_bits: Float[Tensor, "probe item"],
    layout: ProbeLayout,
    blocks: MDLBlocks,
    codes: Int[Tensor, " item"],
    num_classes: int,
    diverged: Int[Tensor, " probe"],
) -> tuple[list[int], Float[Tensor, "seed site variant point"]]:
    """The loss-data curve of every (seed, site, variant) at the MDL grid's sizes that have a
    probe, from 0 (the uniform code): (sizes, mean test bits per item); NaN for a probe that
    diverged (`diverged` > 0). `codes`: each item's split (`probes.splits`)."""
    m, s, t, v = layout.shape
    test = (codes == TEST).to(item_bits.device)
    bits = item_bits.view(m, s, t, v, -1)[..., test].double().mean(-1).cpu()
    bits = torch.where(diverged.view(m, s, t, v).cpu() > 0, torch.nan, bits)
    bounds = block_bounds(blocks, int((codes == TRAIN).sum()))
    masks = list(layout.masks)
    chosen = [(n, masks.index(f)) for f, n in zip(blocks.fractions, bounds) if f in masks]
    uniform = torch.full((s, t, v, 1), math.log2(num_classes), dtype=torch.float64)
    curve = torch.stack([bits[i] for _, i in chosen], dim=-1)
    return [0, *(n for n, _ in chosen)], torch.cat([uniform, curve], dim=-1)


def with_loss_curves(
    codelengths: pl.DataFrame,
    item_bits: Float[Tensor, "probe item"],
    layout: ProbeLayout,
    blocks: MDLBlocks,
    codes: Int[Tensor, " item"],
    num_classes: int,
    diverged: Int[Tensor, " probe"],
) -> pl.DataFrame:
    """The codelength frame (rows in (seed, site, variant) order) with each row's loss-data
    curve (`grid_test_losses`) as the list columns `train_sizes` and `test_bits`."""
    sizes, losses = grid_test_losses(item_bits, layout, blocks, codes, num_classes, diverged)
    flat = losses.reshape(-1, losses.shape[-1]).tolist()
    return codelengths.with_columns(
        pl.Series(SIZES, [sizes] * len(flat), dtype=pl.List(pl.Int64)),
        pl.Series(LOSSES, flat, dtype=pl.List(pl.Float64)),
    )


def sample_complexity_columns(codelengths: pl.DataFrame, epsilon: float) -> pl.DataFrame:
    """`sdl_bits` and `epsilon_sample_complexity` (train items; null where the test loss never
    reaches ε) of every row of a codelength frame that carries its loss-data curve."""
    if LOSSES not in codelengths.columns:
        raise ProbeConfigError(
            "these MDL results carry no loss-data curve (saved by an older lingprobe); refit"
            " with ProbeGrid(mdl=True) to get SDL and ε-sample complexity."
        )
    if not math.isfinite(epsilon) or epsilon < 0:
        raise ProbeConfigError(f"epsilon={epsilon}: give a loss tolerance >= 0 in bits per item.")
    sizes = codelengths[SIZES][0].to_list() if codelengths.height else [0]
    losses = torch.tensor(codelengths[LOSSES].to_list(), dtype=torch.float64)
    losses = losses.reshape(codelengths.height, len(sizes))
    sdl = surplus_description_length(sizes, losses, epsilon)
    esc = epsilon_sample_complexity(sizes, losses, epsilon)
    esc_items: list[int | None] = [int(x) if math.isfinite(x) else None for x in esc.tolist()]
    return codelengths.with_columns(
        epsilon=pl.lit(float(epsilon)),
        sdl_bits=pl.Series(sdl.numpy()),
        epsilon_sample_complexity=pl.Series(esc_items, dtype=pl.Int64),
    )


__all__ = [
    "epsilon_sample_complexity",
    "grid_test_losses",
    "sample_complexity_columns",
    "surplus_description_length",
    "with_loss_curves",
]
