"""Span pooling on the device: one gather and one segment reduction for a whole batch."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import torch
import torch.nn.functional as F
from jaxtyping import Float, Int
from torch import Tensor

PoolHow = Literal["mean", "first", "last", "max"]
POOL_CHOICES: tuple[str, ...] = ("mean", "first", "last", "max")


@dataclass(frozen=True)
class TokenSegments:
    """Which token positions make up each pooled segment (a word, a span, a whole text).

    `positions` are flat indices into a `[batch, token]` grid, grouped by segment in segment order;
    `lengths[s]` is how many positions segment `s` owns (never 0). `offsets[s]` (derived) is where
    segment `s` starts in `positions`.
    """

    positions: Int[Tensor, " pair"]
    lengths: Int[Tensor, " segment"]
    offsets: Int[Tensor, " segment"] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "offsets", torch.cumsum(self.lengths, 0) - self.lengths)

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

    `mean` is one fused gather-and-sum (`embedding_bag`) and a division, `first`/`last` one
    gather, `max` a gather and a `scatter_reduce`. Only the pooled rows are returned, so callers
    can drop `hidden` right after. The segments follow `hidden` to its device (a model split
    across devices is pooled where each layer runs). Half-precision activations (bfloat16,
    float16) are pooled with float32 accumulators and come out in float32: the segments' tokens
    are gathered and widened first, so a mean over a long span loses nothing to rounding.
    """
    if segments.positions.device != hidden.device:
        segments = segments.to(hidden.device)
    flat = hidden.reshape(-1, hidden.shape[-1])
    if flat.is_floating_point() and flat.dtype.itemsize < 4:
        flat = flat.index_select(0, segments.positions).float()
        gathered = torch.arange(flat.shape[0], device=flat.device)
        segments = TokenSegments(gathered, segments.lengths)
    if how == "first":
        return flat.index_select(0, segments.positions[segments.offsets])
    if how == "last":
        return flat.index_select(0, segments.positions[segments.offsets + segments.lengths - 1])
    if how == "mean":
        sums = F.embedding_bag(segments.positions, flat, segments.offsets, mode="sum")
        return sums.div_(segments.lengths.to(sums.dtype).unsqueeze(-1))
    if how == "max":
        rows = flat.index_select(0, segments.positions)
        index = segments.segment_ids().unsqueeze(-1).expand(-1, flat.shape[-1])
        out = torch.empty(segments.count, flat.shape[-1], dtype=flat.dtype, device=flat.device)
        return out.scatter_reduce_(0, index, rows, reduce="amax", include_self=False)
    raise ValueError(f"pool={how!r} is not a pooling; choose one of {', '.join(POOL_CHOICES)}")
