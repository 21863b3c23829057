"""A grid-trainer block's input buffer: how it holds the batch rows its probes train on.

Each step, a block gathers its batch rows from the features, multiplies them by their dropout
keep masks and hands every covered (site, seed) unit's rows to one batched matmul. The buffer
holds them in one of three layouts (the fused chunk in `fused_steps.py` takes the same codes):

- `SITES_OUTER`, `[site, seed, batch, dim]`: shared order, the one stream's rows at its sites;
- `SEEDS_OUTER`, `[seed, site, batch, dim]`: per-seed order, its seeds' rows over every site;
- `ROWS_IN_PLACE`, `[1, batch, site, dim]`: per-seed order, one seed's rows gathered straight
  into the buffer and dropped out there (no permuting copy: 655 vs 680 us per UPOS-sized step,
  one core); the GEMMs read each site's rows with a stride of a whole row.

The layouts hold the same numbers, so a probe's results do not depend on which one its block got.
"""

from __future__ import annotations

import torch
from jaxtyping import Float
from torch import Tensor

SITES_OUTER = 0
SEEDS_OUTER = 1
ROWS_IN_PLACE = 2


def input_layout(seeds_outer: bool, covered: int, same_dtype: bool) -> int:
    """How a block's input buffer holds its rows: `ROWS_IN_PLACE` where it covers one seed in
    per-seed order and the features are in the compute dtype (the gather writes the buffer
    itself), else `SEEDS_OUTER` or `SITES_OUTER`."""
    if not seeds_outer:
        return SITES_OUTER
    return ROWS_IN_PLACE if covered == 1 and same_dtype else SEEDS_OUTER


def input_shape(layout: int, covered: int, n_inner: int, batch: int, dim: int) -> tuple[int, ...]:
    """The shape of a block's input buffer (`covered` outer positions of `n_inner` units)."""
    if layout == ROWS_IN_PLACE:
        return (1, batch, n_inner, dim)
    return (covered, n_inner, batch, dim)


def block_rows(inputs: Tensor, layout: int) -> Float[Tensor, "unit batch dim"]:
    """A block's input buffer as every covered unit's batch rows (a view)."""
    if layout == ROWS_IN_PLACE:  # [1, batch, site, dim]: each site's rows a row apart
        return inputs[0].transpose(0, 1)
    return inputs.flatten(0, 1)


def gather_rows(
    source: Float[Tensor, "item gathered"],
    at: Tensor,
    keep: Tensor,
    inputs: Tensor,
    layout: int,
    n_streams: int,
) -> None:
    """Write one step's batch rows into `inputs`, dropped out: `source` the features as
    `[item, site * dim]` at the gathered sites, `at` the streams' rows one after the other,
    `keep` the streams' keep masks for the step (`[stream, 1, batch, dim]` with seeds outer,
    else `[stream, batch, dim]`). Per step: left unannotated."""
    batch, dim = keep.shape[-2], keep.shape[-1]
    if layout == ROWS_IN_PLACE:
        torch.index_select(source, 0, at, out=inputs.view(batch, -1))
        inputs[0].mul_(keep[0].transpose(0, 1))
        return
    gathered = source.index_select(0, at).view(n_streams, batch, -1, dim)
    order = (0, 2, 1, 3) if layout == SEEDS_OUTER else (2, 0, 1, 3)
    torch.mul(gathered.permute(order), keep, out=inputs)
