"""Train/dev/test assignment of items: split codes (0 train, 1 dev, 2 test, -1 unused) or masks."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from jaxtyping import Bool, Int
from torch import Tensor

from probes.errors import EmptySplitWarning, ProbeInputError

TRAIN, DEV, TEST, UNUSED = 0, 1, 2, -1
SPLIT_NAMES = ("train", "dev", "test")

# Holmes (Waldis et al. 2024) §3: 70/10/20 train/dev/test where a dataset has no splits.
HOLMES_FRACTIONS = (0.7, 0.1, 0.2)


@dataclass(frozen=True)
class Splits:
    """Boolean masks over items; an item in none of them is not used."""

    train: Bool[Tensor, " item"]
    dev: Bool[Tensor, " item"]
    test: Bool[Tensor, " item"]

    def __post_init__(self) -> None:
        overlap = self.train.int() + self.dev.int() + self.test.int()
        if bool((overlap > 1).any()):
            raise ProbeInputError(
                f"splits: {int((overlap > 1).sum())} items are in more than one of train/dev/test;"
                " give each item at most one split."
            )

    def codes(self) -> Int[Tensor, " item"]:
        """Split codes: 0 train, 1 dev, 2 test, -1 unused."""
        codes = torch.full(self.train.shape, UNUSED, dtype=torch.int64)
        for code, mask in enumerate((self.train, self.dev, self.test)):
            codes[mask] = code
        return codes

    @classmethod
    def from_codes(cls, codes: Int[Tensor, " item"]) -> Splits:
        """Masks from split codes (0 train, 1 dev, 2 test, -1 unused)."""
        return cls(codes == TRAIN, codes == DEV, codes == TEST)


def random_splits(
    n_items: int, seed: int = 0, fractions: tuple[float, float, float] = HOLMES_FRACTIONS
) -> Splits:
    """A seeded random train/dev/test assignment (default 70/10/20 as in Holmes).

    Counts are `round(fraction * n_items)` for train and dev, the rest is test.
    """
    if n_items < 1:
        raise ProbeInputError(f"random_splits: n_items={n_items}; need at least one item.")
    if len(fractions) != 3 or min(fractions) < 0 or abs(sum(fractions) - 1) > 1e-6:
        raise ProbeInputError(
            f"random_splits: fractions={fractions}; give three non-negative numbers summing to 1."
        )
    order = torch.randperm(n_items, generator=torch.Generator().manual_seed(seed))
    n_train = round(fractions[0] * n_items)
    n_dev = min(round(fractions[1] * n_items), n_items - n_train)
    codes = torch.full((n_items,), TEST, dtype=torch.int64)
    codes[order[:n_train]] = TRAIN
    codes[order[n_train : n_train + n_dev]] = DEV
    return Splits.from_codes(codes)


def split_codes(
    splits: Splits | Tensor | np.ndarray | Sequence[int], n_items: int
) -> Int[Tensor, " item"]:
    """Normalise a `Splits` or a 1-D sequence of split codes to an int64 code tensor.

    Raises `ProbeInputError` for a wrong length, codes outside {-1, 0, 1, 2}, or no train item.
    """
    if isinstance(splits, Splits):
        codes = splits.codes()
    else:
        codes = torch.as_tensor(np.asarray(splits))
        if codes.ndim != 1 or codes.is_floating_point() or codes.dtype == torch.bool:
            raise ProbeInputError(
                f"splits: got a {codes.dtype} tensor of shape {tuple(codes.shape)}; give a 1-D"
                " integer tensor of split codes (0 train, 1 dev, 2 test, -1 unused) or a Splits."
            )
        codes = codes.to(torch.int64)
    if codes.shape[0] != n_items:
        raise ProbeInputError(
            f"splits: {codes.shape[0]} split codes for {n_items} items; give one code per item."
        )
    bad = codes[(codes < UNUSED) | (codes > TEST)]
    if bad.numel():
        raise ProbeInputError(
            f"splits: code {int(bad[0])} is not a split; use 0 train, 1 dev, 2 test, -1 unused."
        )
    if not bool((codes == TRAIN).any()):
        raise ProbeInputError(
            "splits: no item is in train; assign training items (e.g. random_splits(n_items))."
        )
    return codes


def warn_empty_test(codes: Int[Tensor, " item"]) -> None:
    """Warn (`EmptySplitWarning`) when no item is in test: every test metric will be NaN."""
    if not bool((codes == TEST).any()):
        warnings.warn(
            "splits: no item is in test, so every test metric is NaN; assign test items (e.g."
            " random_splits(n_items)) or read the dev metrics.",
            EmptySplitWarning,
            stacklevel=3,
        )
