"""Seed-level probe metrics summarised once: score, sigma, control, selectivity per group.

Every summary of probe results in lingprobe (`ProbeResults.summary`/`selectivity`, the suites'
score tables and leaderboards) goes through `seed_scores`, so these numbers are computed in one
place:

  score        mean over seeds of the task probes' metric
  sigma        sample standard deviation of the task metric over seeds (Holmes §4.4's σ)
  control      mean over seeds of the control-task probes' metric (Hewitt & Liang 2019)
  selectivity  mean over seeds of task − control, paired by seed (Hewitt & Liang 2019)
  n_seeds      seeds the task probes were trained with
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

SCORE_COLUMNS = ("score", "sigma", "control", "selectivity", "n_seeds")


def seed_scores(table: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Per `keys` group of a long table (`seed`, `variant`, `value` + keys): the score columns.

    `control` and `selectivity` are null where no control probes ran.
    """
    keys = list(keys)
    on_task, on_control = "__task_value", "__control_value"  # keys may hold `task` (a name)
    task = table.filter(pl.col("variant") == "task").select(*keys, "seed", **{on_task: "value"})
    control = table.filter(pl.col("variant") == "control").select(
        *keys, "seed", **{on_control: "value"}
    )
    paired = task.join(control, on=[*keys, "seed"], how="left", nulls_equal=True)
    return (
        paired.group_by(keys)
        .agg(
            score=pl.col(on_task).mean(),
            sigma=pl.col(on_task).std(),
            control=pl.col(on_control).mean(),
            selectivity=(pl.col(on_task) - pl.col(on_control)).mean(),
            n_seeds=pl.col("seed").n_unique().cast(pl.Int64),
        )
        .sort(keys, nulls_last=True)
    )
