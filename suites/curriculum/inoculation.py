"""Inoculation (Liu et al. 2019) with probes: learning curves over N training examples per label.

Paper §4: the model is trained on small seeded subsamples of a phenomenon's training set
(10 to 1000 examples per label) and tested on its evaluation set. Here the "model" is a probe
grid on frozen features: for every (N, seed) the training items are that seed's N-per-label
subsample, the dev items a fixed stratified carve-out of train, the test items `val`.

All subsamples of an input train in one probe grid: the (N, seed) subsamples are explicit
train masks `[N, seed, item]` of `probes.ProbeGrid`, the probes of seed s reading seed s's
subsample, every site batched. Each probe trains exactly as it would in its own
`fit_probes` call on that subsample (one call per (N, seed) gives the same numbers).

The features are `NLIFeatures` (in memory) or an `NLIFeatureSet` (in a store): the probes then
read the input's `FeatureSet` by groups of sites within `config.train.memory`. Features already
in memory are trained on as they are, whatever the budget (as `fit_probes` does a tensor).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl
import torch
from jaxtyping import Bool, Float, Int
from torch import Tensor
from tqdm.auto import tqdm

from internals import FeatureSet
from probes import TRAIN, fit_probes
from suites.curriculum.config import CurriculumConfig
from suites.curriculum.sampling import base_codes, per_label_subsample
from suites.curriculum.stored_features import PairFeatures
from suites.errors import TaskError
from suites.tasks import Task

INPUTS = ("pair", "hypothesis")  # full model input vs hypothesis-only baseline


def probe_input(
    feats: PairFeatures, name: str, config: CurriculumConfig
) -> Float[Tensor, "item site width"] | FeatureSet:
    """The probe input `pair` (the configured combination) or `hypothesis` (hypothesis only):
    a tensor, or a `FeatureSet` for features on disk."""
    if name == "pair":
        return feats.pair(config.combine)
    if name == "hypothesis":
        return feats.hypothesis_only()
    raise TaskError(f"input {name!r} is unknown; choose from {list(INPUTS)}")


def inoculation(
    task: Task,
    feats: PairFeatures,
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
    masks = subsample_masks(base, targets, config)
    grid = replace(config.probe_grid(), train_masks=masks)
    sizes = pl.DataFrame(
        {
            "mask": [float(m) for m in range(len(config.sizes))],
            "n_per_label": list(config.sizes),
            "n_train": masks[:, 0].sum(dim=1).tolist(),
        },
        schema={"mask": pl.Float64, "n_per_label": pl.Int32, "n_train": pl.Int32},
    )
    tables = []
    for name in tqdm(inputs, disable=not progress, desc=f"inoculation {task.phenomenon}"):
        result = fit_probes(
            probe_input(feats, name, config),
            targets,
            base,
            grid,
            config.train_config(),
            num_classes=len(task.labels),
            progress=False,
        )
        table = result.table().filter(variant="task").drop("site", "mask_kind")
        if config.ci is not None:
            keys = ["site_index", "mask", "split", "metric"]
            bounds = result.summary(
                config.ci, n_resamples=config.n_resamples, seed=config.split_seed
            )
            bounds = bounds.filter(variant="task", split="test").select(*keys, "ci_low", "ci_high")
            table = table.join(bounds, on=keys, how="left")
        else:
            table = table.with_columns(
                ci_low=pl.lit(None, pl.Float64), ci_high=pl.lit(None, pl.Float64)
            )
        table = table.join(sizes, on="mask")
        tables.append(table.drop("variant", "mask").with_columns(input=pl.lit(name)))
    return (
        pl.concat(tables)
        .join(feats.site_table(), left_on="site_index", right_on="site")
        .with_columns(phenomenon=pl.lit(task.phenomenon))
        .select(
            "phenomenon",
            "input",
            "n_per_label",
            "n_train",
            "seed",
            pl.col("site_index").alias("site"),
            "site_name",
            "layer",
            "split",
            "metric",
            "value",
            "best_epoch",
            "ci_low",
            "ci_high",
        )
        .sort("input", "n_per_label", "seed", "site", "split", "metric")
    )


def subsample_masks(
    base: Int[Tensor, " item"], targets: Int[Tensor, " item"], config: CurriculumConfig
) -> Bool[Tensor, "size seed item"]:
    """The training items of every (N per label, seed): `per_label_subsample` as masks."""
    return torch.stack(
        [
            torch.stack(
                [per_label_subsample(base, targets, size, seed) == TRAIN for seed in config.seeds]
            )
            for size in config.sizes
        ]
    )


def learning_curves(
    table: pl.DataFrame, *, metric: str = "accuracy", split: str = "test"
) -> pl.DataFrame:
    """Mean, std and best over seeds of one metric per phenomenon, input, N and site, and the
    bootstrap interval of the mean (`ci_low`, `ci_high`; test split, null without one)."""
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
            ci_low=pl.col("ci_low").first() if "ci_low" in table.columns else pl.lit(None),
            ci_high=pl.col("ci_high").first() if "ci_high" in table.columns else pl.lit(None),
        )
        .sort(keys)
    )
