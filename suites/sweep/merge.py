"""Merging a sweep: every finished unit's rows in one table, its scores, and every failure.

`results.parquet`: every finished unit's result rows in `suites.schema.RESULTS_SCHEMA` (model,
init, suite, task, phenomenon, phenomenon_type, site, layer, seed, variant, mask, split, metric,
value, unit). `leaderboard.parquet`: their scores (`suites.schema.score_table`: score, sigma,
control, selectivity per model, task, site, mask, split and metric). `failures.parquet` /
`failures.json`: unit, model, suite, group, tasks, error_type, message, traceback (file),
seconds, worker, time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from lingprobe.atomic import atomic_write_bytes
from suites.outputs import write_table
from suites.schema import BASELINE_INIT, RESULTS_SCHEMA, score_table
from suites.sweep.records import read_failures, read_results

RESULTS, LEADERBOARD, FAILURES_TABLE, FAILURES_JSON = (
    "results.parquet",
    "leaderboard.parquet",
    "failures.parquet",
    "failures.json",
)
ORDER = ["suite", "task", "model", "init", "layer", "site", "mask", "split", "metric"]
FAILURE_COLUMNS: dict[str, pl.DataType] = {
    "unit": pl.Utf8(),
    "model": pl.Utf8(),
    "suite": pl.Utf8(),
    "group": pl.Utf8(),
    "tasks": pl.List(pl.Utf8()),
    "error_type": pl.Utf8(),
    "message": pl.Utf8(),
    "traceback": pl.Utf8(),
    "seconds": pl.Float64(),
    "worker": pl.Utf8(),
    "time": pl.Utf8(),
}


def merge_results(out: Path, unit_ids: Sequence[str]) -> pl.DataFrame:
    """One frame of the finished units' rows, in a fixed order (empty when none finished).

    A baseline (init "baseline") that several units scored on the same data is kept once,
    from its first unit."""
    parts = read_results(out, unit_ids)
    if not parts:
        return pl.DataFrame(schema=RESULTS_SCHEMA)
    rows = pl.concat(parts)
    baseline = pl.col("init") == BASELINE_INIT
    keys = [c for c in RESULTS_SCHEMA if c != "unit"]
    once = rows.filter(baseline).unique(keys, keep="first", maintain_order=True)
    return pl.concat([rows.filter(~baseline), once]).sort(
        ORDER, nulls_last=True, maintain_order=True
    )


def failure_table(out: Path, unit_ids: Sequence[str]) -> pl.DataFrame:
    """The failed (and not since finished) units among `unit_ids`."""
    rows = [{k: r.get(k) for k in FAILURE_COLUMNS} for r in read_failures(out, unit_ids)]
    return pl.DataFrame(rows, schema=FAILURE_COLUMNS)


def write_merged(
    out: Path, unit_ids: Sequence[str]
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Write results, leaderboard (when a unit finished) and failures; returns all three."""
    rows = merge_results(out, unit_ids)
    board = score_table(rows)
    if rows.height:
        write_table(rows, out / RESULTS)
        write_table(board, out / LEADERBOARD)
    failures = failure_table(out, unit_ids)
    write_table(failures, out / FAILURES_TABLE)
    atomic_write_bytes(out / FAILURES_JSON, json.dumps(failures.to_dicts(), indent=2).encode())
    return rows, board, failures
