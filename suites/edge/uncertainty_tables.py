"""The edge tables with their uncertainty: every score's bootstrap interval and pretrained
against random with the paired test (numbers from `suites.edge.intervals`)."""

from __future__ import annotations

import polars as pl

from suites.edge.experiment import with_test_sets
from suites.edge.intervals import SIGNIFICANT

INTERVAL_KEYS = ["model", "init", "task", "site", "layer", "variant", "split", "metric"]


def scores_with_intervals(scores: pl.DataFrame, intervals: pl.DataFrame) -> pl.DataFrame:
    """Seed-mean scores (%) per model, init, task, layer, variant and test set, with `ci_low`/
    `ci_high` (%) where intervals were computed (null otherwise)."""
    marked = with_test_sets(scores)
    mean = marked.group_by([*INTERVAL_KEYS, "test_set"]).agg(score=pl.col("value").mean() * 100)
    if intervals.height == 0:
        return mean.with_columns(ci_low=pl.lit(None, pl.Float64), ci_high=pl.lit(None, pl.Float64))
    bounds = intervals.select(
        *INTERVAL_KEYS, ci_low=pl.col("ci_low") * 100, ci_high=pl.col("ci_high") * 100
    )
    return mean.join(bounds, on=INTERVAL_KEYS, how="left").sort(INTERVAL_KEYS)


def versus_with_tests(
    scores: pl.DataFrame, intervals: pl.DataFrame, comparisons: pl.DataFrame
) -> pl.DataFrame:
    """Per task, model, layer and test set: pretrained and random task scores (%) with their
    intervals, the difference (points) with its interval, `p_value`, `p_holm` and `significant`
    (Holm-adjusted p < 0.05)."""
    if comparisons.height == 0:
        return pl.DataFrame()
    scored = scores_with_intervals(scores, intervals).filter(pl.col("variant") == "task")
    keys = ["task", "site", "layer", "split"]
    pre = scored.filter(init="pretrained").select(
        *keys, "model", pre_low="ci_low", pre_high="ci_high"
    )
    rand = scored.filter(init="random").select(*keys, rand_low="ci_low", rand_high="ci_high")
    table = (
        comparisons.join(pre, on=[*keys, "model"], how="left")
        .join(rand, on=keys, how="left")
        .with_columns(
            pl.col("pretrained", "random", "difference", "ci_low", "ci_high") * 100,
            significant=pl.col("p_holm") < SIGNIFICANT,
        )
    )
    return table.sort("task", "model", "split", "layer")


def with_interval(value: pl.Expr, low: pl.Expr, high: pl.Expr) -> pl.Expr:
    """`value [low, high]` as text with one decimal (just the value where no interval)."""
    text = pl.format("{} [{}, {}]", value.round(1), low.round(1), high.round(1))
    return pl.when(low.is_null()).then(value.round(1).cast(pl.String)).otherwise(text)


def printable_versus(table: pl.DataFrame) -> pl.DataFrame:
    """The pretrained-vs-random table as people read it: `value [low, high]`, p-values and a
    mark `*` where the paired test (Holm) is significant."""
    return table.select(
        "task",
        "model",
        test_set=pl.col("split").str.replace("^test:?", "").replace("", "original"),
        layer="layer",
        pretrained=with_interval(pl.col("pretrained"), pl.col("pre_low"), pl.col("pre_high")),
        random=with_interval(pl.col("random"), pl.col("rand_low"), pl.col("rand_high")),
        difference=with_interval(pl.col("difference"), pl.col("ci_low"), pl.col("ci_high"))
        + pl.when(pl.col("significant")).then(pl.lit(" *")).otherwise(pl.lit("")),
        p=pl.col("p_value").round(4).cast(pl.String),
        p_holm=pl.col("p_holm").round(4).cast(pl.String),
    )
