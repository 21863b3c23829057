"""Batches of model rows (a token budget or a fixed count), padded, with their pooling pieces."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from internals.align import EncodedText
from internals.backends.base import ModelBatch
from internals.pool import TokenSegments

# Token budgets (padded tokens per batch) when none is given: a CPU gains nothing from larger
# batches (benchmarks/bench_extract.py), an accelerator wants many tokens in flight. Out-of-memory
# errors halve a batch and lower the budget (`internals.batch_runner`), so a high default is safe.
DEFAULT_BATCH_TOKENS = {"cpu": 4096, "cuda": 65536, "mps": 16384, "xpu": 32768}
# The planner charges each batch as many padded tokens as 1/BATCH_COST_SHARE of a full budget:
# the fixed cost of a forward call (hooks, kernel launches) that fewer, fuller batches save.
BATCH_COST_SHARE = 64


def default_batch_tokens(device: torch.device) -> int:
    """The token budget used on `device` when none is given."""
    return DEFAULT_BATCH_TOKENS.get(device.type, DEFAULT_BATCH_TOKENS["cpu"])


def padded_tokens(lengths: Sequence[int] | np.ndarray, batch: np.ndarray) -> int:
    """Tokens a batch of these rows occupies once padded to its longest row."""
    return len(batch) * int(np.asarray(lengths)[batch].max())


def length_buckets(
    lengths: Sequence[int], batch_size: int, max_tokens: int
) -> Iterator[np.ndarray]:
    """Fixed batches: `batch_size` rows sorted by length (longest first), within `max_tokens`."""
    order = np.argsort(-np.asarray(lengths), kind="stable")
    start = 0
    while start < len(order):
        longest = lengths[order[start]]
        size = max(1, min(batch_size, max_tokens // max(1, longest)))
        yield order[start : start + size]
        start += size


def budget_batches(lengths: Sequence[int] | np.ndarray, budget: int) -> list[np.ndarray]:
    """Batches of at most `budget` padded tokens with the fewest padded tokens plus batch costs.

    Rows are sorted by length (longest first) and cut into groups of neighbouring lengths by
    dynamic programming over the distinct lengths: a group whose longest row has length `w` holds
    `n` rows in `ceil(n / (budget // w))` batches and costs `n * w` padded tokens plus
    `budget / BATCH_COST_SHARE` per batch. So short rows share large batches, and a batch is cut
    where the length drops enough that padding would cost more than another forward call. A row
    longer than the budget is a batch of its own.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    if len(lengths) == 0:
        return []
    order = np.argsort(-lengths, kind="stable")
    widths, counts = np.unique(-lengths[order], return_counts=True)
    widths = -widths  # distinct lengths, longest first
    rows_before = np.concatenate([[0], np.cumsum(counts)])
    capacity = np.maximum(1, budget // widths)
    batch_cost = budget / BATCH_COST_SHARE
    best = np.zeros(len(widths) + 1)
    cut = np.zeros(len(widths) + 1, dtype=np.int64)
    for end in range(1, len(widths) + 1):
        n = rows_before[end] - rows_before[:end]  # rows in a group of widths [i, end)
        cost = best[:end] + n * widths[:end] + batch_cost * np.ceil(n / capacity[:end])
        cut[end] = int(np.argmin(cost))
        best[end] = cost[cut[end]]
    groups, end = [], len(widths)
    while end > 0:
        groups.append((int(cut[end]), end))
        end = int(cut[end])
    batches: list[np.ndarray] = []
    for first, end in reversed(groups):
        rows = order[rows_before[first] : rows_before[end]]
        step = int(capacity[first])
        batches.extend(rows[i : i + step] for i in range(0, len(rows), step))
    return batches


@dataclass(frozen=True)
class Padding:
    """How a batch is laid out for the model."""

    pad_id: int
    side: str  # "right" | "left"
    pass_positions: bool  # give the model explicit position_ids (needed under left padding)
    decoder_start: int | None  # encoder-decoders: the decoder reads [start] + input_ids


def _pad(
    rows: list[list[int]], pad_id: int, side: str
) -> tuple[torch.Tensor, torch.Tensor, list[int]]:
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    shifts = []
    for i, row in enumerate(rows):
        shift = width - len(row) if side == "left" else 0
        ids[i, shift : shift + len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, shift : shift + len(row)] = 1
        shifts.append(shift)
    return ids, mask, shifts


def _segments(texts: list[EncodedText], shifts: list[int], width: int, extra: int) -> TokenSegments:
    pieces = [seg for text in texts for seg in text.segments]
    lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    per_row = np.fromiter((len(t.segments) for t in texts), dtype=np.int64, count=len(texts))
    starts = np.arange(len(texts)) * width + np.asarray(shifts, dtype=np.int64) + extra
    positions = np.concatenate(pieces).astype(np.int64) + np.repeat(
        np.repeat(starts, per_row), lengths
    )
    return TokenSegments(torch.from_numpy(positions), torch.from_numpy(lengths))


def collate(
    texts: list[EncodedText], padding: Padding, parts: Sequence[str], device: torch.device
) -> ModelBatch:
    """Pad a batch and build each part's segments (decoder positions shifted by the start token)."""
    rows = [t.input_ids for t in texts]
    ids, mask, shifts = _pad(rows, padding.pad_id, padding.side)
    inputs = {"input_ids": ids, "attention_mask": mask}
    if padding.pass_positions:
        inputs["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0)
    segments = {parts[0]: _segments(texts, shifts, ids.shape[1], 0)}
    if padding.decoder_start is not None:
        dec_rows = [[padding.decoder_start, *r] for r in rows]
        dec_ids, dec_mask, dec_shifts = _pad(dec_rows, padding.pad_id, padding.side)
        inputs["decoder_input_ids"] = dec_ids
        inputs["decoder_attention_mask"] = dec_mask
        segments[parts[1]] = _segments(texts, dec_shifts, dec_ids.shape[1], 1)
    return ModelBatch(
        {k: v.to(device, non_blocking=True) for k, v in inputs.items()},
        {k: v.to(device) for k, v in segments.items()},
    )
