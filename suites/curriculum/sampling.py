"""Seeded, label-stratified choices of items: dev carve-outs, N-per-label subsamples, folds.

All work on split codes (`probes` convention: 0 train, 1 dev, 2 test, -1 unused). Within a label,
items are taken in one seeded permutation, so for one seed the subsample of N per label is a
prefix of the subsample of any larger N (nested learning curves).
"""

from __future__ import annotations

import torch
from jaxtyping import Bool, Int
from torch import Tensor

from probes import DEV, TEST, TRAIN, UNUSED
from suites.errors import TaskError
from suites.tasks import Task


def _label_orders(
    targets: Int[Tensor, " item"], among: Bool[Tensor, " item"], seed: int
) -> list[Int[Tensor, " chosen"]]:
    """Per label, the items of `among` with that label in a seeded order."""
    gen = torch.Generator().manual_seed(seed)
    orders = []
    for label in range(int(targets.max()) + 1):
        items = (among & (targets == label)).nonzero().flatten()
        orders.append(items[torch.randperm(items.numel(), generator=gen)])
    return orders


def base_codes(task: Task, dev_fraction: float, seed: int) -> Int[Tensor, " item"]:
    """Task split codes with a stratified `dev_fraction` of train moved to dev (where the task
    has no dev items); evaluation (`val`) items keep code 2."""
    codes = task.splits.clone()
    if bool((codes == DEV).any()) or dev_fraction <= 0:
        return codes
    if not 0 < dev_fraction < 1:
        raise TaskError(f"dev_fraction={dev_fraction}; give a fraction in (0, 1)")
    for items in _label_orders(task.targets, codes == TRAIN, seed):
        codes[items[: max(1, round(dev_fraction * items.numel()))]] = DEV
    return codes


def per_label_subsample(
    codes: Int[Tensor, " item"], targets: Int[Tensor, " item"], n_per_label: int, seed: int
) -> Int[Tensor, " item"]:
    """Codes whose train items are at most `n_per_label` seeded items of each label (the other
    train items become unused); dev and test are unchanged."""
    if n_per_label < 1:
        raise TaskError(f"n_per_label={n_per_label}; give at least one example per label")
    out = torch.where(codes == TRAIN, UNUSED, codes)
    for items in _label_orders(targets, codes == TRAIN, seed):
        out[items[:n_per_label]] = TRAIN
    return out


def stratified_folds(
    targets: Int[Tensor, " item"], among: Bool[Tensor, " item"], folds: int, seed: int
) -> Int[Tensor, " item"]:
    """Fold id (0..folds-1) of every item of `among`, labels spread evenly; -1 elsewhere."""
    if folds < 2:
        raise TaskError(f"folds={folds}; cross-fitting needs at least 2 folds")
    fold = torch.full(targets.shape, -1, dtype=torch.int64)
    offset = 0
    for items in _label_orders(targets, among, seed):
        fold[items] = (torch.arange(items.numel()) + offset) % folds
        offset += items.numel()
    return fold


def carve_dev(
    train: Bool[Tensor, " item"],
    targets: Int[Tensor, " item"],
    fraction: float,
    seed: int,
    test: Bool[Tensor, " item"] | None = None,
) -> Int[Tensor, " item"]:
    """Codes for training on `train` with a stratified `fraction` of it as dev; `test` items
    (if given) get code 2, everything else -1."""
    codes = torch.full(targets.shape, UNUSED, dtype=torch.int64)
    if test is not None:
        codes[test] = TEST
    for items in _label_orders(targets, train, seed):
        n_dev = round(fraction * items.numel()) if items.numel() > 1 else 0
        codes[items[:n_dev]] = DEV
        codes[items[n_dev:]] = TRAIN
    return codes
