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
from internals.items import CharSpan

# IS_SPACE[c]: str.isspace() of code point c (every whitespace code point is below 0x3001);
# the last entry stands for every code point above.
IS_SPACE = np.array([chr(c).isspace() for c in range(0x3001)] + [False])


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
    n = len(text)
    codepoints = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    space = IS_SPACE[np.minimum(codepoints, len(IS_SPACE) - 1)]
    # next_solid[i]: first non-space index >= i; prev_solid_end[i]: 1 + last non-space index < i.
    index = np.arange(n + 1)
    solid_pos = np.where(np.append(~space, True), index, n + 1)
    next_solid = np.minimum.accumulate(solid_pos[::-1])[::-1]
    last_pos = np.where(np.insert(~space, 0, True), index, -1)
    prev_solid_end = np.maximum.accumulate(last_pos)
    starts = np.clip(starts, 0, n)
    ends = np.clip(ends, 0, n)
    trimmed_start = next_solid[starts]
    trimmed_end = prev_solid_end[ends]
    return trimmed_start, np.maximum(trimmed_end, trimmed_start)


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
            if s >= last_char:
                fix = "the text was truncated at the model's maximum length; shorten the text"
            else:
                fix = "the tokenizer maps these characters to nothing; pick a span with other text"
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
    encoded: list[EncodedText] = []
    for k, text in enumerate(texts):
        segments = align_text(
            text,
            spans[k],
            encoding["offset_mapping"][k],
            encoding["special_tokens_mask"][k],
            item_index=item_index[k],
            field=fields[k],
        )
        prefix, suffix = special_ends(encoding["special_tokens_mask"][k])
        encoded.append(EncodedText(list(encoding["input_ids"][k]), segments, prefix, suffix))
    return encoded
