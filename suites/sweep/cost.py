"""The plan of a sweep as a table (`lingprobe sweep CONFIG --dry-run`): units and their cost.

Per unit: status (done, failed, to run), datasets, items (train + dev + test) and distinct
texts (forward passes) to encode, sites, probes per site (seeds x task/control x train
fractions; MDL block probes not counted), and an estimated time: items x the model's measured
seconds per item over its finished units in this folder (none before a unit of it finished).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import polars as pl

from internals import fingerprint
from suites.datasets import as_source
from suites.registry import SUITES
from suites.sweep.config import SweepConfig
from suites.sweep.plan import unit_identity
from suites.sweep.records import Records, read_log
from suites.sweep.units import Unit
from suites.tasks import Task


def _size(tasks: Sequence[Task]) -> tuple[int, int]:
    items = sum(t.frame.height for t in tasks)
    texts = sum(t.frame.select("text", "text_pair").unique().height for t in tasks)
    return items, texts


def plan_table(config: SweepConfig, units: Sequence[Unit]) -> pl.DataFrame:
    """One row per unit: status, datasets, items, texts, sites, probes per site, est. seconds."""
    records = Records(config.out)
    source = as_source(config.data, progress=False, trust_local=config.trust_local)
    sizes: dict[str, tuple[int, int, int]] = {}
    rows = []
    for unit in units:
        suite = SUITES[unit.suite]
        identity = unit_identity(unit)
        identity.pop("model")
        key = fingerprint(json.loads(json.dumps(identity, default=str)))
        if key not in sizes:  # the same tasks for every model
            tasks = suite.tasks(unit.config, unit.group, source)
            sizes[key] = (len(tasks), *_size(tasks))
        datasets, items, texts = sizes[key]
        status = (
            "done"
            if records.is_done(unit.id)
            else ("failed" if records.failure_path(unit.id).exists() else "to run")
        )
        rows.append(
            {
                "unit": unit.id,
                "model": unit.model.label,
                "suite": unit.suite,
                "group": unit.group.name,
                "status": status,
                "datasets": datasets,
                "items": items,
                "texts": texts,
                "sites": getattr(unit.config, "layers", "all"),
                "probes_per_site": suite.probes_per_site(unit.config),
            }
        )
    table = pl.DataFrame(rows)
    return (
        table.join(_rates(config, table), on="model", how="left")
        .with_columns(
            est_seconds=pl.when(pl.col("status") != "done").then(pl.col("items") * pl.col("rate"))
        )
        .drop("rate")
    )


def _rates(config: SweepConfig, table: pl.DataFrame) -> pl.DataFrame:
    """Measured seconds per item of each model, from its finished units' logged times."""
    empty = pl.DataFrame(schema={"model": pl.Utf8, "rate": pl.Float64})
    log = read_log(config.out)
    if not log.height or "seconds" not in log.columns:
        return empty
    finished = (
        log.filter(pl.col("event") == "done")
        .group_by("unit")
        .agg(pl.col("seconds").last())
        .join(table.filter(pl.col("status") == "done").select("unit", "model", "items"), on="unit")
    )
    if not finished.height:
        return empty
    return finished.group_by("model").agg(rate=pl.col("seconds").sum() / pl.col("items").sum())


def describe(table: pl.DataFrame) -> str:
    """The plan's totals in one paragraph."""
    counts = {s: table.filter(pl.col("status") == s).height for s in ("done", "failed", "to run")}
    todo = table.filter(pl.col("status") != "done")
    known = todo.filter(pl.col("est_seconds").is_not_null())
    lines = [
        f"{table.height} units: {counts['done']} done, {counts['failed']} failed,"
        f" {counts['to run']} to run",
        f"to encode: {int(todo['items'].sum() or 0)} items ({int(todo['texts'].sum() or 0)}"
        " distinct texts) over the units left",
    ]
    if known.height:
        seconds = float(known["est_seconds"].sum())
        lines.append(
            f"estimated time: {seconds / 60:.1f} min for {known.height} of {todo.height} units"
            " left (rates of their models' finished units)"
        )
    elif todo.height:
        lines.append("estimated time: unknown until a unit of each model has finished")
    return "\n".join(lines)
