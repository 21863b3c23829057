"""Words and spans (character offsets) to token positions, from the tokenizer's offset mapping.

A token belongs to a span when its character range, with surrounding whitespace trimmed (byte-level
BPE and SentencePiece fold the leading space into the token), overlaps the span. Special tokens
(BOS, CLS, SEP, EOS, padding) and tokens that cover only whitespace are never part of a span.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from internals.errors import ItemError, TokenizerError
from internals.items import CharSpan, invisible

# IS_SPACE[c]: str.isspace() of code point c (every whitespace code point is below 0x3001);
# the last entry stands for every code point above.
IS_SPACE = np.array([chr(c).isspace() for c in range(0x3001)] + [False])
ALIGN_CHUNK_CHARS = 2**20  # characters aligned in one pass: bounds its arrays (not results)


@dataclass(frozen=True)
class EncodedText:
    """One tokenized text and the token positions of each of its segments."""

    input_ids: list[int]
    segments: list[np.ndarray]  # token positions (within this text's tokens) per segment
    prefix: int = 0  # special tokens the tokenizer put before the text (CLS, BOS)
    suffix: int = 0  # and after it (SEP, EOS)


def special_ends(special: Sequence[int]) -> tuple[int, int]:
    """Lengths of the leading and trailing runs of special tokens."""
    flags = np.asarray(special, dtype=bool)
    if flags.all():
        return len(flags), 0
    solid = np.nonzero(~flags)[0]
    return int(solid[0]), int(len(flags) - 1 - solid[-1])


def require_offsets(tokenizer: Any) -> None:
    """Raise `TokenizerError` unless the tokenizer returns character offsets."""
    if not getattr(tokenizer, "is_fast", False):
        raise TokenizerError(
            f"{type(tokenizer).__name__} is a slow tokenizer and returns no character offsets, so"
            " words cannot be aligned to tokens; load the fast tokenizer (use_fast=True, or"
            " PreTrainedTokenizerFast(tokenizer_object=...))"
        )


def _trim(text: str, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shrink character ranges so they start and end on non-whitespace (empty if all space)."""
    start, end, _ = _trim_many([text], np.zeros(len(starts), dtype=np.int64), starts, ends)
    return start - 1, end - 1  # the text starts at 1, after the leading sentinel


def _trim_many(
    texts: Sequence[str], text_of: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_trim` of ranges of several texts (`text_of`: each range's text), clipped to their text,
    as positions in the texts laid end to end between non-space sentinels ("\0t0\0t1...\0",
    which keep the trimming inside each text); also where each text starts there."""
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    base = np.cumsum(lengths + 1) - lengths
    joined = "\0" + "\0".join(texts) + "\0"
    codepoints = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    space = IS_SPACE[np.minimum(codepoints, len(IS_SPACE) - 1)]
    # next_solid[i]: first non-space index >= i; prev_solid_end[i]: 1 + last non-space index < i
    index = np.arange(len(space))
    next_solid = np.minimum.accumulate(np.where(space, len(space), index)[::-1])[::-1]
    solid_ends = np.maximum.accumulate(np.where(space, 0, index + 1))
    prev_solid_end = np.concatenate([[0], solid_ends[:-1]])
    length, at = lengths[text_of], base[text_of]
    start = next_solid[at + np.clip(starts, 0, length)]
    end = np.maximum(prev_solid_end[at + np.clip(ends, 0, length)], start)
    return start, end, base


def align_text(
    text: str,
    spans: Sequence[CharSpan],
    offsets: Sequence[tuple[int, int]],
    special: Sequence[int],
    *,
    item_index: int | Sequence[int],
    field: str,
) -> list[np.ndarray]:
    """Token positions of each span of `text` (of the whole text when `spans` is empty).

    `item_index` names the item an error is about: one index, or one per span.
    """
    wanted = list(spans) if spans else [(0, len(text))]
    owners = [item_index] * len(wanted) if isinstance(item_index, int) else list(item_index)
    if len(offsets) == 0:
        raise ItemError(owners[0], f"{field} produced no tokens; give a non-empty text")
    off = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
    start, end = _trim(text, off[:, 0], off[:, 1])
    usable = (np.asarray(special, dtype=bool) == 0) & (end > start)
    bounds = np.asarray(wanted, dtype=np.int64).reshape(-1, 2)
    hits = usable & (start < bounds[:, 1:]) & (end > bounds[:, :1])  # [span, token]
    span_of, token = np.nonzero(hits)
    counts = np.bincount(span_of, minlength=len(wanted))
    if counts.all():
        return np.split(token, np.cumsum(counts)[:-1])
    last_char = int(end[usable].max()) if usable.any() else 0
    for (s, e), owner, count in zip(wanted, owners, counts):
        if count == 0:
            if not usable.any():
                fix = (
                    f"the {field} has no tokens: the tokenizer maps all its characters to nothing"
                    " (e.g. zero-width or control characters only); give visible text"
                )
            elif s >= last_char and not invisible(text[s:e]):
                fix = "the text was truncated at the model's maximum length; shorten the text"
            else:
                fix = (
                    "the tokenizer maps these characters to nothing (zero-width or control"
                    " characters); pick a span with other text"
                )
            raise ItemError(
                owner, f"span ({s}, {e}) of {field} ({text[s:e]!r}) covers no token: {fix}"
            )
    raise AssertionError("unreachable: some span has no token")


def encode_texts(
    tokenizer: Any,
    texts: Sequence[str],
    spans: Sequence[Sequence[CharSpan]],
    item_index: Sequence[int | Sequence[int]],
    fields: Sequence[str],
    *,
    max_length: int | None,
) -> list[EncodedText]:
    """Tokenize all texts in one fast-tokenizer call and align their spans (see `align_text`).

    `max_length=None` keeps every token (long texts are then laid out by `text_rows`).
    """
    require_offsets(tokenizer)
    encoding = tokenizer(
        list(texts),
        return_offsets_mapping=True,
        return_special_tokens_mask=True,
        add_special_tokens=True,
        truncation=max_length is not None,
        max_length=max_length,
        verbose=False,
    )
    if "offset_mapping" not in encoding:
        raise TokenizerError(
            f"{type(tokenizer).__name__} returned no offset_mapping; use a fast tokenizer"
        )
    offsets, special = encoding["offset_mapping"], encoding["special_tokens_mask"]
    aligned: list[list[np.ndarray] | None] = []
    for part in _char_chunks([len(t) for t in texts], ALIGN_CHUNK_CHARS):
        aligned += align_many(texts[part], spans[part], offsets[part], special[part])
    encoded: list[EncodedText] = []
    for k, text in enumerate(texts):
        segments = aligned[k]
        if segments is None:  # not laid out in order, or a span without tokens: one by one
            segments = align_text(
                text,
                spans[k],
                offsets[k],
                special[k],
                item_index=item_index[k],
                field=fields[k],
            )
        prefix, suffix = special_ends(special[k])
        encoded.append(EncodedText(list(encoding["input_ids"][k]), segments, prefix, suffix))
    return encoded


def _char_chunks(lengths: Sequence[int], limit: int) -> list[slice]:
    """Consecutive ranges of texts of at most `limit` characters together (a longer text alone)."""
    parts, start, total = [], 0, 0
    for k, n in enumerate(lengths):
        if total and total + n > limit:
            parts.append(slice(start, k))
            start, total = k, 0
        total += n
    return [*parts, slice(start, len(lengths))]


def align_many(
    texts: Sequence[str],
    spans: Sequence[Sequence[CharSpan]],
    offsets: Sequence[Sequence[tuple[int, int]]],
    special: Sequence[Sequence[int]],
) -> list[list[np.ndarray] | None]:
    """`align_text` of every text in a few array operations over all of them: the token
    positions of each span, or None for a text this cannot settle (the caller then aligns it
    alone, which also raises its errors).

    Within a text whose usable tokens (not special, not only whitespace) have non-decreasing
    trimmed starts and ends, the tokens overlapping a span are one run of them: the first whose
    end passes the span's start up to the last that starts before its end, found by binary
    search. Texts are laid end to end in one array (each between two non-space sentinels, which
    keeps the whitespace trimming inside the text) and their character positions keyed by text,
    so one search serves them all (a text whose tokens are out of order keeps its values within
    its own stretch of the array, so the search still answers every other text rightly). A text
    whose tokens are out of order, that has no tokens, or with a span that covers no token is
    left to `align_text`.
    """
    n_texts = len(texts)
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=n_texts)
    n_tokens = np.fromiter((len(o) for o in offsets), dtype=np.int64, count=n_texts)
    text_of = np.repeat(np.arange(n_texts), n_tokens)
    off = np.array([pair for row in offsets for pair in row], dtype=np.int64).reshape(-1, 2)
    flags = np.fromiter((f for row in special for f in row), dtype=bool, count=len(text_of))
    start, end, base = _trim_many(texts, text_of, off[:, 0], off[:, 1])
    usable = ~flags & (end > start)
    start, end, owner = start[usable], end[usable], text_of[usable]
    position = (np.arange(len(text_of)) - np.repeat(np.cumsum(n_tokens) - n_tokens, n_tokens))[
        usable
    ]
    settled = n_tokens > 0
    disorder = (np.diff(start) < 0) | (np.diff(end) < 0)
    settled[owner[1:][disorder & (owner[1:] == owner[:-1])]] = False
    wanted = [list(s) if s else [(0, len(t))] for s, t in zip(spans, texts)]
    n_spans = np.fromiter((len(w) for w in wanted), dtype=np.int64, count=n_texts)
    bounds = np.array([b for w in wanted for b in w], dtype=np.int64).reshape(-1, 2)
    span_base = np.repeat(base, n_spans)
    first = np.searchsorted(end, span_base + bounds[:, 0], side="right")
    stop = np.searchsorted(start, span_base + bounds[:, 1], side="left")
    span_text = np.repeat(np.arange(n_texts), n_spans)
    outside = (bounds[:, 0] < 0) | (bounds[:, 1] > lengths[span_text])
    settled[span_text[(stop <= first) | outside]] = False
    out: list[list[np.ndarray] | None] = []
    cut = 0
    for k in range(n_texts):
        runs = zip(first[cut : cut + n_spans[k]].tolist(), stop[cut : cut + n_spans[k]].tolist())
        out.append([position[a:b] for a, b in runs] if settled[k] else None)
        cut += n_spans[k]
    return out
