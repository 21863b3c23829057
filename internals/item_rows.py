"""Where each batch's pooled pieces go: straight into the features `[item, site, width x dim]`.

A text's segments (words, spans) are pooled as pieces, batch by batch in length order; items may
share a segment (two items asking for the same span of one sentence) and one item may hold
several (`width` spans side by side). When every segment is one piece (every text fits the
model), each batch's pooled rows are copied once, to every item position that asks for them, in
the features' final layout: no buffer of all pieces, no reordering copy, no copy for `width`.
Otherwise (texts cut into windows, whose pieces merge into segments) the pieces are kept and
merged at the end (`combine_pieces`), then placed.
"""

from __future__ import annotations

import numpy as np
import torch
from jaxtyping import Float, Int
from torch import Tensor

from internals.pool import PoolHow
from internals.text_rows import RowPlan, combine_pieces


class ItemRows:
    """The features being filled: `write` each batch's pieces, then `result()`."""

    def __init__(
        self,
        plan: RowPlan,
        rows: Int[np.ndarray, " position"],
        n_items: int,
        n_sites: int,
        dim: int,
        how: PoolHow,
    ) -> None:
        self.plan, self.rows, self.how = plan, rows, how
        self.n_items, self.width = n_items, len(rows) // n_items
        segment = plan.pieces.segment
        self.direct = len(segment) == plan.n_segments and np.array_equal(
            segment, np.arange(plan.n_segments)
        )
        if self.direct:
            self.out = torch.empty(n_items, n_sites, self.width * dim)
            # positions asking for each segment, grouped by segment
            self.order = np.argsort(rows, kind="stable")
            self.asks = np.bincount(rows, minlength=plan.n_segments)
            self.first = np.cumsum(self.asks) - self.asks
        else:
            self.pieces = torch.empty(len(segment), n_sites, dim)

    def write(
        self, pieces: Int[np.ndarray, " piece"], pooled: Float[Tensor, "piece site dim"]
    ) -> None:
        """The pooled rows of the pieces `pieces`, every site at once (sites in order)."""
        if not self.direct:
            self.pieces.index_copy_(0, torch.from_numpy(pieces), pooled)
            return
        asks = self.asks[pieces]
        source = None
        if bool((asks == 1).all()):
            positions = self.order[self.first[pieces]]
        else:  # a segment asked for by several positions: its row is copied to each
            ends = np.cumsum(asks)
            rank = np.arange(ends[-1]) - np.repeat(ends - asks, asks)
            positions = self.order[np.repeat(self.first[pieces], asks) + rank]
            source = torch.from_numpy(np.repeat(np.arange(len(pieces)), asks))
        item = torch.from_numpy(positions // self.width)
        slot = torch.from_numpy(positions % self.width)
        # [item, span, site, dim]: each position is one (item, span), all its sites in one write
        spans = self.out.view(self.n_items, self.out.shape[1], self.width, -1).transpose(1, 2)
        spans.index_put_((item, slot), pooled if source is None else pooled[source])

    def result(self) -> Float[Tensor, "item site width_dim"]:
        """The features, every position written."""
        if self.direct:
            return self.out
        merged = combine_pieces(self.pieces, self.plan.pieces, self.plan.n_segments, self.how)
        dim = merged.shape[2]
        in_order = len(self.rows) == len(merged) and np.array_equal(
            self.rows, np.arange(len(self.rows))
        )
        out = merged if in_order else merged[torch.from_numpy(self.rows)]
        return (
            out.view(self.n_items, self.width, merged.shape[1], dim)
            .transpose(1, 2)
            .reshape(self.n_items, merged.shape[1], self.width * dim)
        )
