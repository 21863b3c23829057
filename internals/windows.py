"""Sliding windows over a long token sequence, and which window each word is read from.

A text longer than the model's maximum length is read as windows of `width` content tokens that
start every `stride` tokens (the last window is aligned to the end of the text). A segment (word or
span) is read from the window that holds all of its tokens and gives it the most context: for
bidirectional models the most tokens on both sides (the larger of the two smallest margins), for
causal models the most tokens on the left. That is the usual rule of long-document tagging, applied
per segment so that a word is never split between windows. A segment that no window can hold (a
whole long text, a very long span) is read token by token, each token from its own best window.
Ties go to the earlier window.
"""

from __future__ import annotations

import numpy as np
from jaxtyping import Int


def window_starts(n_tokens: int, width: int, stride: int) -> Int[np.ndarray, " window"]:
    """First content token of every window over `n_tokens` tokens (one window when they fit)."""
    if width < 1 or not 1 <= stride <= width:
        raise ValueError(f"windows need width >= 1 and 1 <= stride <= width; got {width}, {stride}")
    if n_tokens <= width:
        return np.zeros(1, dtype=np.int64)
    return np.append(np.arange(0, n_tokens - width, stride), n_tokens - width).astype(np.int64)


def best_windows(
    first: Int[np.ndarray, " segment"],
    last: Int[np.ndarray, " segment"],
    starts: Int[np.ndarray, " window"],
    width: int,
    *,
    causal: bool,
) -> Int[np.ndarray, " segment"]:
    """For segments spanning tokens `first..last` (inclusive), the best window's index or -1.

    -1 means no window holds the whole segment. The context of a segment in the window starting at
    `s` is `first - s` on the left and `s + width - 1 - last` on the right; a concave function of
    `s`, so the best of the sorted starts is a neighbour of its peak, found by binary search.
    """
    lo = np.searchsorted(starts, last - width + 1, side="left")  # first window reaching `last`
    hi = np.searchsorted(starts, first, side="right") - 1  # last window starting by `first`
    if causal:
        choice = lo.astype(np.int64)
    else:
        peak = np.searchsorted(starts, (first + last - width + 1) / 2, side="right") - 1
        a = np.clip(peak, lo, np.maximum(hi, lo))
        b = np.clip(peak + 1, lo, np.maximum(hi, lo))

        def context(k: np.ndarray) -> np.ndarray:
            s = starts[np.minimum(k, len(starts) - 1)]
            return np.minimum(first - s, s + width - 1 - last)

        choice = np.where(context(a) >= context(b), a, b).astype(np.int64)
    return np.where(lo <= hi, choice, -1)


def token_windows(
    tokens: Int[np.ndarray, " token"], starts: Int[np.ndarray, " window"], width: int, causal: bool
) -> Int[np.ndarray, " token"]:
    """The best window of each single token (every token lies in some window)."""
    return best_windows(tokens, tokens, starts, width, causal=causal)
