"""Merging a sweep: every finished unit's rows in one leaderboard, every failure in one table.

`leaderboard.parquet` columns: unit, suite, model (the sweep's label), name, init, dtype,
kind, dataset, test_set ("test" for Holmes; "original" or a heuristic's filtered set for
edge), then the suite's own columns (phenomenon, phenomenon_type, input_type, metric, site,
part, layer, is_last, ranked, fraction, score, sigma, control, selectivity, n_seeds, ...;
Holmes adds compression and split sizes). `failures.parquet` / `failures.json`: unit, model,
suite, group, tasks, error_type, message, traceback (file), seconds, worker, time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from internals.store import atomic_write_bytes
from suites.outputs import write_table
from suites.sweep.records import read_failures, read_results

LEADERBOARD, FAILURES_TABLE, FAILURES_JSON = (
    "leaderboard.parquet",
    "failures.parquet",
    "failures.json",
)
ORDER = ["suite", "dataset", "test_set", "model", "layer", "site", "fraction"]
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
    """One frame of the finished units' rows, in a fixed order (empty when none finished)."""
    parts = read_results(out, unit_ids)
    if not parts:
        return pl.DataFrame()
    board = pl.concat(parts, how="diagonal_relaxed")
    return board.sort([c for c in ORDER if c in board.columns], nulls_last=True)


def failure_table(out: Path, unit_ids: Sequence[str]) -> pl.DataFrame:
    """The failed (and not since finished) units among `unit_ids`."""
    rows = [{k: r.get(k) for k in FAILURE_COLUMNS} for r in read_failures(out, unit_ids)]
    return pl.DataFrame(rows, schema=FAILURE_COLUMNS)


def write_merged(out: Path, unit_ids: Sequence[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Write `leaderboard.parquet` (when a unit finished), `failures.parquet` and `.json`."""
    board = merge_results(out, unit_ids)
    if board.height:
        write_table(board, out / LEADERBOARD)
    failures = failure_table(out, unit_ids)
    write_table(failures, out / FAILURES_TABLE)
    atomic_write_bytes(out / FAILURES_JSON, json.dumps(failures.to_dicts(), indent=2).encode())
    return board, failures
