"""The explorer's numbers: seed-mean scores per site, and one score per model and task (the
headline metric at the layer its dev score picks) for the leaderboard."""

from __future__ import annotations

import polars as pl

from probes import seed_scores

HEADLINE = ("accuracy", "macro_f1", "micro_f1", "uuas", "root_acc", "pearson", "mcc")
SITE_KEYS = ["model", "init", "suite", "task", "phenomenon", "phenomenon_type", "site", "layer"]
TASK_KEYS = ["model", "init", "suite", "task", "phenomenon", "phenomenon_type"]


def label(model: str, init: str) -> str:
    """How a subject is named in the explorer: the model, `@random` for its twin."""
    if init == "random" and not model.endswith("@random"):
        return f"{model}@random"
    return model


def headline_metrics(rows: pl.DataFrame) -> pl.DataFrame:
    """`task, metric`: the first metric of `HEADLINE` each task has (else its first metric)."""
    present = rows.select("task", "metric").unique()
    rank = {m: i for i, m in enumerate(HEADLINE)}
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
            lambda s: label(s["model"], s["init"]), return_dtype=pl.String
        )
    )


def task_scores(sites: pl.DataFrame) -> pl.DataFrame:
    """One test score per subject and task: at the site with the best dev score (the best test
    site where no dev rows exist; a baseline's only row)."""
    test = sites.filter(pl.col("split") == "test")
    dev = sites.filter(pl.col("split") == "dev")
    keys = [*TASK_KEYS, "subject"]
    picked = (
        dev.sort("score", descending=True, nulls_last=True)
        .group_by(keys, maintain_order=True)
        .first()
        .select(*keys, "site")
    )
    chosen = test.join(picked, on=[*keys, "site"], how="semi", nulls_equal=True)
    missing = test.join(picked, on=keys, how="anti", nulls_equal=True)
    best = (
        missing.sort("score", descending=True, nulls_last=True)
        .group_by(keys, maintain_order=True)
        .first()
    )
    return pl.concat([chosen, best.select(chosen.columns)]).select(
        *keys, "layer", "metric", "score"
    )
