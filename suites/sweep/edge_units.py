"""Edge units of a sweep: one model on one edge task (train and test file), in its own folder.

The unit is `suites.edge.experiment.run_edge` on one subject, saved with
`suites.edge.report.save_unit` (so `lingprobe report` renders the unit folder as any edge run),
and summarised into leaderboard rows: per site and test set (original and each heuristic's
filtered set), the mean task score over seeds, its σ, the control score and the selectivity.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import polars as pl

from internals import Subject
from internals import sites as site_rules
from suites.commands.edge import read_task
from suites.edge.experiment import EdgeConfig, prepare, run_edge
from suites.edge.report import save_unit
from suites.sweep.config import EdgeEntry
from suites.sweep.units import Unit, UnitContext
from suites.tasks import Task

CONFIG_KEYS = ("seeds", "control", "epochs", "lr", "batch_size", "dropout")


def edge_config(unit: Unit) -> EdgeConfig:
    """The unit's `EdgeConfig`: the paper's defaults, overridden by the sweep's probe settings."""
    entry = unit.entry
    assert isinstance(entry, EdgeEntry)
    given = unit.probe.given()
    changes: dict[str, Any] = {k: given[k] for k in CONFIG_KEYS if k in given}
    if "kind" in given:
        changes["probe"] = given["kind"]
    return EdgeConfig(
        legacy_keys=entry.legacy_keys,
        pair_pooling=entry.pair_pooling,  # type: ignore[arg-type]
        balance_binary=entry.balance_binary,
        **changes,
    )


def identity(unit: Unit) -> dict[str, Any]:
    """Everything that decides the unit's numbers besides the model."""
    entry = unit.entry
    assert isinstance(entry, EdgeEntry)
    return {
        "task": entry.task,
        "train": entry.train,
        "test": entry.test,
        "layers": entry.layers,
        "sentences": unit.limits.sentences,
        "edge": asdict(edge_config(unit)),
    }


def _read(unit: Unit, context: UnitContext) -> tuple[Task, Task]:
    entry = unit.entry
    assert isinstance(entry, EdgeEntry)
    limit = unit.limits.sentences
    return (
        read_task(entry.task, entry.train, "train", limit, data=context.data),
        read_task(entry.task, entry.test, "test", limit, data=context.data),
    )


def tasks(unit: Unit, context: UnitContext) -> list[Task]:
    """The unit's task as the run prepares it (train, carved dev, test)."""
    train, test = _read(unit, context)
    return [prepare(train, test, edge_config(unit))]


def run(unit: Unit, subject: Subject, context: UnitContext) -> pl.DataFrame:
    """Run the unit into its folder; its leaderboard rows."""
    entry = unit.entry
    assert isinstance(entry, EdgeEntry)
    config = edge_config(unit)
    train, test = _read(unit, context)
    chosen = list(dict.fromkeys(site_rules.select(subject, entry.layers)))  # "0,-1" on GloVe
    results = run_edge(
        [subject], train, test, chosen, config, store=context.store, progress=context.progress
    )
    save_unit(results, context.folder(unit.id), config.legacy_keys)
    last = site_rules.last(subject)[0].name
    return leaderboard_rows(results.scores, train, entry.name, last).with_columns(
        kind=pl.lit(subject.kind)
    )


def leaderboard_rows(scores: pl.DataFrame, task: Task, dataset: str, last: str) -> pl.DataFrame:
    """Per site and test set: mean task score over seeds, σ, control score, selectivity."""
    keys = ["site_name", "seed", "test_set"]
    control = scores.filter(pl.col("variant") == "control").select(*keys, control="value")
    paired = scores.filter(pl.col("variant") == "task").join(control, on=keys, how="left")
    return (
        paired.group_by("site_name", "layer", "test_set", "metric")
        .agg(
            score=pl.col("value").mean(),
            sigma=pl.col("value").std(),
            control=pl.col("control").mean(),
            selectivity=(pl.col("value") - pl.col("control")).mean(),
            n_seeds=pl.col("seed").n_unique(),
            n_test=pl.col("n_items").first(),
        )
        .select(
            pl.lit(dataset).alias("dataset"),
            pl.lit(task.phenomenon).alias("phenomenon"),
            pl.lit(task.phenomenon_type).alias("phenomenon_type"),
            pl.lit(task.input_type).alias("input_type"),
            "metric",
            pl.col("site_name").alias("site"),
            pl.col("site_name").str.split(".").list.first().alias("part"),
            pl.col("layer").cast(pl.Int64),
            (pl.col("site_name") == last).alias("is_last"),
            (pl.col("site_name") == last).alias("ranked"),
            pl.lit(1.0).alias("fraction"),
            "test_set",
            "score",
            "sigma",
            "control",
            "selectivity",
            pl.col("n_seeds").cast(pl.Int64),
            pl.col("n_test").cast(pl.Int64),
        )
        .sort("test_set", "layer")
    )
