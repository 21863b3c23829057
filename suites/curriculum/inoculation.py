"""Inoculation (Liu et al. 2019) with probes: learning curves over N training examples per label.

Paper §4: the model is trained on small seeded subsamples of a phenomenon's training set
(10 to 1000 examples per label) and tested on its evaluation set. Here the "model" is a probe
grid on frozen features: for every (N, seed) the training items are that seed's N-per-label
subsample, the dev items a fixed stratified carve-out of train, the test items `val`.

`probes.fit_probes` takes one training set per call (train masks are fractions of one seeded
order, not label-stratified subsamples), so each (N, seed, input) is one call; the sites of the
features train together inside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

import polars as pl
from jaxtyping import Float
from torch import Tensor
from tqdm.auto import tqdm

from probes import fit_probes
from probes.splits import TRAIN
from suites.curriculum.config import CurriculumConfig
from suites.curriculum.features import NLIFeatures
from suites.curriculum.sampling import base_codes, per_label_subsample
from suites.errors import TaskError
from suites.tasks import Task

INPUTS = ("pair", "hypothesis")  # full model input vs hypothesis-only baseline


def probe_input(
    feats: NLIFeatures, name: str, config: CurriculumConfig
) -> Float[Tensor, "item site width"]:
    """The probe input `pair` (the configured combination) or `hypothesis` (hypothesis only)."""
    if name == "pair":
        return feats.pair(config.combine)
    if name == "hypothesis":
        return feats.hypothesis_only()
    raise TaskError(f"input {name!r} is unknown; choose from {list(INPUTS)}")


def inoculation(
    task: Task,
    feats: NLIFeatures,
    config: CurriculumConfig | None = None,
    *,
    inputs: Sequence[str] = INPUTS,
    progress: bool = True,
) -> pl.DataFrame:
    """Learning curves: probe metrics per (input, N per label, seed, site, split, metric).

    Columns: phenomenon, input, n_per_label, n_train, seed, site, site_name, layer, split,
    metric, value, best_epoch. `inputs`: `pair` (full input) and/or `hypothesis`.
    """
    config = config or CurriculumConfig()
    if len(feats) != len(task):
        raise TaskError(
            f"{len(feats)} feature rows for {len(task)} items of {task.name}; build the features"
            " from this task"
        )
    targets = task.targets
    base = base_codes(task, config.dev_fraction, config.split_seed)
    tables = []
    runs = list(product(config.sizes, config.seeds, inputs))
    for size, seed, name in tqdm(runs, disable=not progress, desc=f"inoculation {task.phenomenon}"):
        codes = per_label_subsample(base, targets, size, seed)
        result = fit_probes(
            probe_input(feats, name, config),
            targets,
            codes,
            config.probe_grid((seed,)),
            config.train_config(),
            num_classes=len(task.labels),
            progress=False,
        )
        tables.append(
            result.table()
            .filter(variant="task")
            .drop("variant", "mask")
            .with_columns(
                input=pl.lit(name),
                n_per_label=pl.lit(size),
                n_train=pl.lit(int((codes == TRAIN).sum())),
            )
        )
    return (
        pl.concat(tables)
        .join(feats.site_table(), on="site")
        .with_columns(phenomenon=pl.lit(task.phenomenon))
        .select(
            "phenomenon",
            "input",
            "n_per_label",
            "n_train",
            "seed",
            "site",
            "site_name",
            "layer",
            "split",
            "metric",
            "value",
            "best_epoch",
        )
    )


def learning_curves(
    table: pl.DataFrame, *, metric: str = "accuracy", split: str = "test"
) -> pl.DataFrame:
    """Mean, std and best over seeds of one metric per phenomenon, input, N and site."""
    keys = ["phenomenon", "input", "n_per_label", "site", "site_name", "layer"]
    return (
        table.filter(metric=metric, split=split)
        .group_by(keys)
        .agg(
            mean=pl.col("value").mean(),
            std=pl.col("value").std(),
            best=pl.col("value").max(),
            n_train=pl.col("n_train").mean(),
            n_seeds=pl.col("seed").n_unique(),
        )
        .sort(keys)
    )
