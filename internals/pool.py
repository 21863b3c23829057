"""Span pooling on the device: one gather and one segment reduction for a whole batch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from jaxtyping import Float, Int
from torch import Tensor

PoolHow = Literal["mean", "first", "last", "max"]
POOL_CHOICES: tuple[str, ...] = ("mean", "first", "last", "max")


@dataclass(frozen=True)
class TokenSegments:
    """Which token positions make up each pooled segment (a word, a span, a whole text).

    `positions` are flat indices into a `[batch, token]` grid, grouped by segment in segment order;
    `lengths[s]` is how many positions segment `s` owns (never 0).
    """

    positions: Int[Tensor, " pair"]
    lengths: Int[Tensor, " segment"]

    @property
    def count(self) -> int:
        """Number of segments."""
        return int(self.lengths.shape[0])

    def segment_ids(self) -> Int[Tensor, " pair"]:
        """The segment each position belongs to."""
        ids = torch.arange(self.count, device=self.lengths.device)
        return torch.repeat_interleave(ids, self.lengths)

    def to(self, device: torch.device | str) -> TokenSegments:
        """Move to `device` (non-blocking where possible)."""
        return TokenSegments(
            self.positions.to(device, non_blocking=True), self.lengths.to(device, non_blocking=True)
        )

    @staticmethod
    def from_ranges(ranges: Int[Tensor, "segment 3"], n_tokens: int) -> TokenSegments:
        """Build from contiguous `(batch_index, start_token, end_token)` rows (end exclusive)."""
        batch, start, end = ranges.unbind(-1)
        lengths = end - start
        if bool((lengths <= 0).any()):
            bad = int(torch.nonzero(lengths <= 0)[0, 0])
            raise ValueError(f"segment {bad} has end <= start; token ranges must be non-empty")
        offsets = torch.cumsum(lengths, 0) - lengths
        within = torch.arange(int(lengths.sum()), device=ranges.device) - torch.repeat_interleave(
            offsets, lengths
        )
        positions = torch.repeat_interleave(batch * n_tokens + start, lengths) + within
        return TokenSegments(positions, lengths)


def pool_spans(
    hidden: Float[Tensor, "batch token dim"], segments: TokenSegments, how: PoolHow = "mean"
) -> Float[Tensor, "segment dim"]:
    """Reduce each segment's token vectors to one vector, on `hidden`'s device, without a loop.

    `mean` and `max` use one gather plus `index_add_` / `scatter_reduce_`; `first` and `last` are
    one gather. Only the pooled rows are returned, so callers can drop `hidden` right after.
    """
    flat = hidden.reshape(-1, hidden.shape[-1])
    lengths = segments.lengths
    if how == "first":
        starts = torch.cumsum(lengths, 0) - lengths
        return flat[segments.positions[starts]]
    if how == "last":
        return flat[segments.positions[torch.cumsum(lengths, 0) - 1]]
    rows = flat[segments.positions]
    ids = segments.segment_ids()
    out = torch.zeros(segments.count, flat.shape[-1], dtype=flat.dtype, device=flat.device)
    if how == "mean":
        out.index_add_(0, ids, rows)
        return out / lengths.to(out.dtype).unsqueeze(-1)
    if how == "max":
        index = ids.unsqueeze(-1).expand(-1, flat.shape[-1])
        return out.scatter_reduce_(0, index, rows, reduce="amax", include_self=False)
    raise ValueError(f"pool={how!r} is not a pooling; choose one of {', '.join(POOL_CHOICES)}")
