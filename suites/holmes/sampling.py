"""Group-aware splits and subsamples: items that share a sentence (or a minimal pair) stay together.

Splitting by group keeps a probe from training on one word of a sentence and testing on its
neighbour, or on one half of a BLiMP minimal pair and testing on the other; subsampling by
sentence keeps the encoding cost proportional to the items kept (items of one text share one
forward pass).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import polars as pl

from suites.tasks import SPLITS, Task, TaskError


def split_groups(
    task: Task,
    groups: Sequence[str],
    fractions: tuple[float, float, float],
    seed: int = 0,
    rows: str | None = None,
) -> Task:
    """Seeded train/dev/test assignment of whole groups (`groups[i]` is row i's group).

    `rows=None` re-splits every row; `rows="train"` splits only the current train rows (e.g.
    to carve dev out of train), keeping the other rows' splits.
    """
    if len(groups) != task.frame.height:
        raise TaskError(f"{len(groups)} group ids for {task.frame.height} rows of {task.name!r}")
    if abs(sum(fractions) - 1) > 1e-9 or any(f < 0 for f in fractions):
        raise TaskError(f"split fractions {fractions} must be >= 0 and sum to 1")
    current = task.frame["split"].to_list()
    eligible = [rows is None or s == rows for s in current]
    names = sorted({g for g, ok in zip(groups, eligible) if ok})
    random.Random(seed).shuffle(names)
    n_train = round(fractions[0] * len(names))
    n_dev = round(fractions[1] * len(names))
    assigned = {
        g: ("train" if r < n_train else "dev" if r < n_train + n_dev else "test")
        for r, g in enumerate(names)
    }
    split = [assigned[g] if ok else s for g, ok, s in zip(groups, eligible, current)]
    return task.with_frame(task.frame.with_columns(pl.Series("split", split)))


def ensure_dev(task: Task, fraction: float = 0.1, seed: int = 0) -> Task:
    """Carve a seeded `fraction` of the training sentences into dev when a task has no dev."""
    if task.split("dev").height:
        return task
    if task.split("train").height < 2:
        raise TaskError(f"task {task.name!r} has no dev items and too few train items to carve")
    carve = (1 - fraction, fraction, 0.0)
    return split_groups(task, task.frame["text"].to_list(), carve, seed, rows="train")


def limit_items(task: Task, per_split: Mapping[str, int | None], seed: int = 0) -> Task:
    """At most `per_split[name]` rows of each split, taken as whole seeded-random sentences.

    Sentences are drawn in a seeded order until the split holds `n` rows; the last sentence
    is cut so that exactly `n` rows remain.
    """
    parts = []
    for name in SPLITS:
        rows = task.split(name)
        limit = per_split.get(name)
        if limit is not None and rows.height > limit:
            texts = rows["text"].unique(maintain_order=True).to_list()
            random.Random(f"{seed}:{name}").shuffle(texts)
            order = {t: i for i, t in enumerate(texts)}
            rows = (
                rows.with_row_index("_row")
                .with_columns(pl.col("text").replace_strict(order).alias("_order"))
                .sort("_order", "_row")
                .head(limit)
                .sort("_row")
                .drop("_row", "_order")
            )
        parts.append(rows)
    return task.with_frame(pl.concat(parts))
