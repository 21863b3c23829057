"""Cross-distribution generalisation (Rozen et al. 2019; paper §4): train on the simple or the
hard half of a phenomenon's training set (halves by PVI), test on the simple and hard halves of
its evaluation set: a 2x2 matrix per phenomenon (and site). Features in a store
(`NLIFeatureSet`) are trained on and scored by groups of sites within `config.train.memory`."""

from __future__ import annotations

import polars as pl
import torch

from probes import TEST, TRAIN, fit_probes
from suites.curriculum.config import CurriculumConfig
from suites.curriculum.probe_outputs import held_out_probabilities, subset_metrics
from suites.curriculum.pvi import HARD, SIMPLE
from suites.curriculum.sampling import carve_dev
from suites.curriculum.stored_features import PairFeatures
from suites.errors import TaskError
from suites.tasks import Task

HALVES = (SIMPLE, HARD)


def _halves(task: Task, pvi_table: pl.DataFrame) -> list[str]:
    """The difficulty half of each task item ("" where PVI gave none)."""
    marks = pvi_table.select("row", "difficulty").unique("row")
    half = dict(zip(marks["row"].to_list(), marks["difficulty"].to_list()))
    return [half.get(i, "") for i in range(len(task))]


def cross_distribution(
    task: Task,
    feats: PairFeatures,
    pvi_table: pl.DataFrame,
    config: CurriculumConfig | None = None,
    *,
    progress: bool = True,
) -> pl.DataFrame:
    """Probe metrics for every (train half, test half, seed, site).

    `pvi_table` is `pvi_scores(task, feats, config)` (its `difficulty` column). Each train half
    carves its own stratified dev part. Columns: phenomenon, train_half, test_half, n_train,
    n_test, seed, site, site_name, layer, metric, value.
    """
    config = config or CurriculumConfig()
    x = feats.pair(config.combine)
    targets = task.targets
    halves = _halves(task, pvi_table)
    is_train, is_test = task.splits == TRAIN, task.splits == TEST
    in_half = {h: torch.tensor([m == h for m in halves]) for h in HALVES}
    missing = [h for h in HALVES if not bool((in_half[h] & is_train).any())]
    if missing or not bool((in_half[SIMPLE] & is_test).any()):
        raise TaskError(
            f"{task.name}: the PVI table marks no {missing or ['test']} items as {HALVES};"
            " compute pvi_scores on this task first"
        )
    codes = [
        carve_dev(is_train & in_half[h], targets, config.dev_fraction, config.split_seed)
        for h in HALVES
    ]
    grid = config.masked_grid(codes)
    result = fit_probes(
        x,
        targets,
        task.splits,
        grid,
        config.train_config(),
        num_classes=len(task.labels),
        progress=progress,
    )
    test_rows = is_test.nonzero().flatten()
    probs = held_out_probabilities(result, x, test_rows, config.train.memory_bytes)
    tables: list[pl.DataFrame] = []
    for mask, train_half in enumerate(HALVES):
        probes = result.probes.filter(pl.col("mask") == float(mask)).sort("probe")
        chosen = torch.tensor(probes["probe"].to_list())
        for test_half in HALVES:
            include = in_half[test_half][test_rows]
            scores = subset_metrics(probs[chosen], targets[test_rows], include)
            tables.extend(
                probes.select("seed", "site").with_columns(
                    train_half=pl.lit(train_half),
                    test_half=pl.lit(test_half),
                    n_train=pl.lit(int((codes[mask] == TRAIN).sum())),
                    n_test=pl.lit(int(include.sum())),
                    metric=pl.lit(metric),
                    value=pl.Series(values.tolist(), dtype=pl.Float64),
                )
                for metric, values in scores.items()
            )
    return (
        pl.concat(tables)
        .join(feats.site_table(), on="site")
        .with_columns(phenomenon=pl.lit(task.phenomenon))
        .select(
            "phenomenon",
            "train_half",
            "test_half",
            "n_train",
            "n_test",
            "seed",
            "site",
            "site_name",
            "layer",
            "metric",
            "value",
        )
    )


def cross_matrix(table: pl.DataFrame, *, metric: str = "accuracy") -> pl.DataFrame:
    """Mean and std over seeds per phenomenon, site, train half and test half (the 2x2 cells)."""
    keys = ["phenomenon", "site", "site_name", "layer", "train_half", "test_half"]
    return (
        table.filter(metric=metric)
        .group_by(keys)
        .agg(
            mean=pl.col("value").mean(), std=pl.col("value").std(), n_test=pl.col("n_test").first()
        )
        .sort(keys)
    )
