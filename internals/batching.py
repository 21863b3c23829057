"""Length-bucketed batches of tokenized texts, padded for the model, with pooling segments."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from internals.align import EncodedText
from internals.backends.base import ModelBatch
from internals.pool import TokenSegments


def length_buckets(
    lengths: Sequence[int], batch_size: int, max_tokens: int
) -> Iterator[np.ndarray]:
    """Indices of texts grouped by length (longest first) so batches carry little padding."""
    order = np.argsort(-np.asarray(lengths), kind="stable")
    start = 0
    while start < len(order):
        longest = lengths[order[start]]
        size = max(1, min(batch_size, max_tokens // max(1, longest)))
        yield order[start : start + size]
        start += size


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
    positions, lengths = [], []
    for row, (text, shift) in enumerate(zip(texts, shifts)):
        for seg in text.segments:
            positions.append(row * width + shift + extra + seg)
            lengths.append(len(seg))
    return TokenSegments(
        torch.from_numpy(np.concatenate(positions).astype(np.int64)),
        torch.tensor(lengths, dtype=torch.long),
    )


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
