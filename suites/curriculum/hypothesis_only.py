"""Hypothesis-only baseline (Poliak et al. 2018): the inoculation probes without the premise.

Paper §4: a hypothesis-only model is trained for each phenomenon and compared with the best
inoculated model; high baseline accuracy signals artifacts in the hypotheses. The comparison
uses the largest training size both inputs were run at.
"""

from __future__ import annotations

import polars as pl

from suites.curriculum.config import CurriculumConfig
from suites.curriculum.inoculation import inoculation
from suites.curriculum.stored_features import PairFeatures
from suites.errors import TaskError
from suites.tasks import Task


def hypothesis_only(
    task: Task,
    feats: PairFeatures,
    config: CurriculumConfig | None = None,
    *,
    progress: bool = True,
) -> pl.DataFrame:
    """Inoculation curves of hypothesis-only probes (same table as `inoculation`)."""
    return inoculation(task, feats, config, inputs=("hypothesis",), progress=progress)


def hypothesis_gap(
    table: pl.DataFrame, *, metric: str = "accuracy", split: str = "test"
) -> pl.DataFrame:
    """Full (pair) vs hypothesis-only per phenomenon and site at the largest shared N.

    Columns: phenomenon, site, site_name, layer, n_per_label, full_mean, full_best,
    hypothesis_mean, hypothesis_best, gap (full_mean - hypothesis_mean).
    """
    rows = table.filter(metric=metric, split=split)
    shared = (
        rows.group_by("phenomenon", "n_per_label")
        .agg(pl.col("input").n_unique().alias("inputs"))
        .filter(pl.col("inputs") == 2)
        .group_by("phenomenon")
        .agg(pl.col("n_per_label").max())
    )
    if shared.height == 0:
        raise TaskError("the table needs both `pair` and `hypothesis` rows at a common size")
    keys = ["phenomenon", "site", "site_name", "layer", "n_per_label"]
    stats = (
        rows.join(shared, on=["phenomenon", "n_per_label"])
        .group_by(*keys, "input")
        .agg(mean=pl.col("value").mean(), best=pl.col("value").max())
    )
    full = stats.filter(input="pair").select(*keys, full_mean="mean", full_best="best")
    hyp = stats.filter(input="hypothesis").select(
        *keys, hypothesis_mean="mean", hypothesis_best="best"
    )
    return (
        full.join(hyp, on=keys)
        .with_columns(gap=pl.col("full_mean") - pl.col("hypothesis_mean"))
        .sort("phenomenon", "site")
    )
