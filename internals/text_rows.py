"""Encoded texts laid out as model rows — whole, cut, or as sliding windows — and pooled back.

A text that fits the model's maximum length is one row, exactly as tokenized. A longer text
follows the `long_texts` policy: "error" refuses it, "truncate" keeps its first window, "window"
reads it as sliding windows (`internals.windows`), each carrying the text's own special tokens.
Only the windows that some segment is read from are run.

A segment is pooled from one or more *pieces*, each the segment's tokens inside one row. Words
and spans are one piece; a segment that no window holds (a whole long text) has one piece per
window it is read from, and `combine_pieces` merges them: a length-weighted mean, a max of maxima,
the first piece's first token or the last piece's last token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from jaxtyping import Float, Int
from torch import Tensor

from internals.align import EncodedText
from internals.errors import ItemError, TokenizerError
from internals.pool import PoolHow
from internals.reading import LongTexts
from internals.windows import best_windows, token_windows, window_starts


@dataclass(frozen=True)
class Pieces:
    """Where each piece goes: its segment, its rank within the segment, its token count."""

    segment: Int[np.ndarray, " piece"]
    rank: Int[np.ndarray, " piece"]
    size: Int[np.ndarray, " piece"]


@dataclass(frozen=True)
class RowPlan:
    """Every row the model reads, and how their pooled pieces map back to segments."""

    rows: list[EncodedText]  # `segments` of a row are its pieces, in piece order
    first_piece: Int[np.ndarray, " row"]
    pieces: Pieces
    n_segments: int
    cut_texts: list[int]  # texts shortened by long_texts="truncate"
    cut_tokens: int


def plan_rows(
    texts: Sequence[EncodedText],
    owners: Sequence[Sequence[int]],
    fields: Sequence[str],
    *,
    max_length: int,
    long_texts: LongTexts,
    stride: int | None,
    causal: bool,
) -> RowPlan:
    """Lay out every text (segments numbered across texts in order); `owners` name the items."""
    rows: list[EncodedText] = []
    segment, rank, size = [], [], []
    cut_texts, cut_tokens, first_segment = [], 0, 0
    for k, text in enumerate(texts):
        if len(text.input_ids) <= max_length:
            laid = [(text.input_ids, [(i, 0, seg) for i, seg in enumerate(text.segments)])]
        elif long_texts == "error":
            raise ItemError(
                owners[k][0],
                f"{fields[k]} has {len(text.input_ids)} tokens, more than the model's maximum"
                f" length of {max_length}; use long_texts='window' (sliding windows) or"
                " long_texts='truncate'",
            )
        else:
            laid = _windows(text, owners[k], fields[k], max_length, long_texts, stride, causal)
            if long_texts == "truncate":
                cut_texts.append(k)
                cut_tokens += len(text.input_ids) - max_length
        for ids, pieces in laid:
            rows.append(EncodedText(list(ids), [positions for _, _, positions in pieces]))
            for local, piece_rank, positions in pieces:
                segment.append(first_segment + local)
                rank.append(piece_rank)
                size.append(len(positions))
        first_segment += len(text.segments)
    counts = np.array([len(row.segments) for row in rows], dtype=np.int64)
    return RowPlan(
        rows,
        np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64),
        Pieces(np.array(segment, np.int64), np.array(rank, np.int64), np.array(size, np.int64)),
        first_segment,
        cut_texts,
        cut_tokens,
    )


def _windows(
    text: EncodedText,
    owners: Sequence[int],
    field: str,
    max_length: int,
    long_texts: LongTexts,
    stride: int | None,
    causal: bool,
) -> list[tuple[list[int], list[tuple[int, int, np.ndarray]]]]:
    """Rows (ids, [(segment, rank, positions)]) of a text longer than `max_length`."""
    n = len(text.input_ids)
    head, tail = text.input_ids[: text.prefix], text.input_ids[n - text.suffix :]
    content = text.input_ids[text.prefix : n - text.suffix]
    width = max_length - text.prefix - text.suffix
    if width < 1:
        raise TokenizerError(
            f"the model's maximum length {max_length} leaves no room for text between"
            f" {text.prefix + text.suffix} special tokens"
        )
    if long_texts == "truncate":
        starts = np.zeros(1, dtype=np.int64)
    else:
        step = width // 2 if stride is None else stride
        starts = window_starts(len(content), width, max(1, min(step, width)))
    local = [segment - text.prefix for segment in text.segments]  # content coordinates
    firsts = np.array([tokens[0] for tokens in local])
    lasts = np.array([tokens[-1] for tokens in local])
    chosen = best_windows(firsts, lasts, starts, width, causal=causal)
    by_window: dict[int, list[tuple[int, int, np.ndarray]]] = {}
    for index, (tokens, window) in enumerate(zip(local, chosen)):
        if long_texts == "truncate":
            kept = tokens[tokens < width]
            if len(kept) == 0:
                raise ItemError(
                    owners[index],
                    f"span {index} of {field} lies past the model's maximum length of"
                    f" {max_length} tokens and the text was truncated (long_texts='truncate');"
                    " use long_texts='window' to read it",
                )
            by_window.setdefault(0, []).append((index, 0, kept))
        elif window >= 0:
            by_window.setdefault(int(window), []).append((index, 0, tokens))
        else:  # no window holds it: token by token, one piece per window in token order
            per_token = token_windows(tokens, starts, width, causal)
            cuts = np.nonzero(np.diff(per_token))[0] + 1
            for piece_rank, part in enumerate(np.split(tokens, cuts)):
                window_of = int(per_token[np.searchsorted(tokens, part[0])])
                by_window.setdefault(window_of, []).append((index, piece_rank, part))
    rows = []
    for window in sorted(by_window):
        start = int(starts[window])
        ids = [*head, *content[start : start + width], *tail]
        shift = text.prefix - start
        pieces = [(index, r, positions + shift) for index, r, positions in by_window[window]]
        rows.append((ids, pieces))
    return rows


def combine_pieces(
    pooled: Float[Tensor, "piece site dim"], pieces: Pieces, n_segments: int, how: PoolHow
) -> Float[Tensor, "segment site dim"]:
    """Merge pooled pieces into their segments (a one-piece segment is copied as it is).
    When every segment is one piece in segment order (any text that fits the model), the pooled
    rows are the segments already and come back as they are, without a copy."""
    if len(pieces.segment) == n_segments and np.array_equal(pieces.segment, np.arange(n_segments)):
        return pooled
    segment = torch.from_numpy(pieces.segment)
    counts = torch.bincount(segment, minlength=n_segments)
    out = torch.empty((n_segments, *pooled.shape[1:]), dtype=pooled.dtype)
    single = counts[segment] == 1
    out[segment[single]] = pooled[single]
    if bool(single.all()):
        return out
    multi = ~single
    owner, rows = segment[multi], pooled[multi]
    rank = torch.from_numpy(pieces.rank)[multi]
    if how == "mean":
        weight = torch.from_numpy(pieces.size)[multi].to(pooled.dtype)
        total = torch.zeros_like(out).index_add_(0, owner, rows * weight[:, None, None])
        tokens = torch.zeros(n_segments, dtype=pooled.dtype).index_add_(0, owner, weight)
        merged = total / tokens.clamp(min=1)[:, None, None]
    elif how == "max":
        index = owner[:, None, None].expand_as(rows)
        merged = torch.zeros_like(out).scatter_reduce_(0, index, rows, "amax", include_self=False)
    else:
        last_rank = counts[owner] - 1
        pick = rank == 0 if how == "first" else rank == last_rank
        merged = torch.zeros_like(out)
        merged[owner[pick]] = rows[pick]
    targets = torch.unique(owner)
    out[targets] = merged[targets]
    return out
