"""The explorer's numbers: seed-mean scores per site, and one score per model and task (the
headline metric at the layer its dev score picks) for the leaderboard."""

from __future__ import annotations

import polars as pl

from probes import METRICS, higher_is_better, seed_scores
from suites.schema import model_label

SITE_KEYS = ["model", "init", "suite", "task", "phenomenon", "phenomenon_type", "site", "layer"]
TASK_KEYS = ["model", "init", "suite", "task", "phenomenon", "phenomenon_type"]


def headline_metrics(rows: pl.DataFrame) -> pl.DataFrame:
    """`task, metric`: each task's first metric in the order of `probes.metric_table` (else
    its first metric by name)."""
    present = rows.select("task", "metric").unique()
    rank = {m: i for i, m in enumerate(METRICS)}
    return (
        present.with_columns(order=pl.col("metric").replace_strict(rank, default=len(rank)))
        .sort("task", "order", "metric")
        .group_by("task", maintain_order=True)
        .first()
        .select("task", "metric")
    )


def site_scores(rows: pl.DataFrame) -> pl.DataFrame:
    """Seed means per site, split and metric of the headline metric: score, control,
    selectivity, sigma (`probes.scores.seed_scores`, the one place they are computed)."""
    chosen = rows.join(headline_metrics(rows), on=["task", "metric"])
    mask = chosen.group_by("task").agg(pl.col("mask").max())  # all of train where fractions ran
    chosen = chosen.join(mask, on=["task", "mask"])
    return seed_scores(chosen, [*SITE_KEYS, "split", "metric"]).with_columns(
        subject=pl.struct("model", "init").map_elements(
            lambda s: model_label(s["model"], s["init"]), return_dtype=pl.String
        )
    )


def best_first(scores: pl.DataFrame) -> pl.DataFrame:
    """Rows from the best score down (the lowest first for a metric whose `higher_is_better`
    is False in `probes.metric_table`), missing scores last."""
    lower = {m: -1.0 for m in METRICS if not higher_is_better(m)}
    sign = pl.col("metric").replace_strict(lower, default=1.0, return_dtype=pl.Float64)
    return scores.sort(pl.col("score") * sign, descending=True, nulls_last=True)


def task_scores(sites: pl.DataFrame) -> pl.DataFrame:
    """One test score per subject and task: at the site with the best dev score (the best test
    site where no dev rows exist; a baseline's only row)."""
    test = sites.filter(pl.col("split") == "test")
    dev = sites.filter(pl.col("split") == "dev")
    keys = [*TASK_KEYS, "subject"]
    picked = best_first(dev).group_by(keys, maintain_order=True).first().select(*keys, "site")
    chosen = test.join(picked, on=[*keys, "site"], how="semi", nulls_equal=True)
    missing = test.join(picked, on=keys, how="anti", nulls_equal=True)
    best = best_first(missing).group_by(keys, maintain_order=True).first()
    return pl.concat([chosen, best.select(chosen.columns)]).select(
        *keys, "layer", "metric", "score"
    )
