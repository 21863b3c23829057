"""Rendering a sweep folder (`lingprobe report DIR`): the merged rows and scores, a headline
heatmap, each suite's own summary over its units, and the failures.

  results.parquet, leaderboard.parquet, failures.parquet, failures.json  (re-merged)
  scores.png        headline score per model and task (ranked site, whole train set, test split)
  <suite>/          each suite's `summarize` over its units (Holmes rankings, edge drop tables...)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from suites.holmes.scores import ranked_site
from suites.outputs import read_manifest
from suites.plots import heatmap
from suites.registry import SUITES
from suites.sweep.merge import write_merged
from suites.sweep.units import UNITS


@dataclass(frozen=True)
class SweepReport:
    """The tables a report rendered."""

    rows: pl.DataFrame
    leaderboard: pl.DataFrame
    failures: pl.DataFrame
    headline: pl.DataFrame  # one score per (suite, task, model)


def headline(board: pl.DataFrame) -> pl.DataFrame:
    """One score per (suite, task, model): its suite's headline metric on the test split, at the
    model's ranked site and the largest train mask (all of train; the largest N per label)."""
    if board.height == 0:
        return pl.DataFrame()
    test = board.filter(pl.col("split") == "test")
    chosen = []
    for (suite, _, _), rows in test.group_by("suite", "task", "model"):
        metrics = [m for m in SUITES[str(suite)].headline_metrics if m in set(rows["metric"])]
        if not metrics:
            continue
        sites = rows["site"].drop_nulls().unique().to_list()
        at_site = pl.col("site") == ranked_site(sites) if sites else pl.lit(True)  # baselines
        best = rows.filter(
            (pl.col("metric") == metrics[0]) & at_site & (pl.col("mask") == pl.col("mask").max())
        )
        chosen.append(best.head(1))
    if not chosen:
        return pl.DataFrame()
    return (
        pl.concat(chosen)
        .select("suite", "task", "model", "init", "site", "metric", "score", "sigma", "selectivity")
        .sort("suite", "task", "model")
    )


def render(out: Path, *, echo: bool = True) -> SweepReport:
    """Merge the planned units of `out`, write tables and plots, print the summary."""
    unit_ids = list(read_manifest(out).get("units", []))
    rows, board, failures = write_merged(out, unit_ids)
    top = headline(board)
    if top.height:
        heatmap(
            top.with_columns(task=pl.col("suite") + ":" + pl.col("task")),
            out / "scores.png",
            rows="model",
            columns="task",
            value="score",
            title="Sweep: headline score per model and task (ranked site, test split)",
            colorbar="score (each suite's headline metric: "
            + ", ".join(sorted(set(top["metric"].to_list())))
            + ")",
        )
    for name, suite in SUITES.items():
        mine = rows.filter(pl.col("suite") == name)
        if mine.height:
            folders = [out / UNITS / u for u in mine["unit"].unique().sort().to_list()]
            suite.summarize(mine, folders, out / name)
    if echo:
        _print(top, failures, len(unit_ids), rows["unit"].n_unique() if rows.height else 0)
    return SweepReport(rows, board, failures, top)


def _print(top: pl.DataFrame, failures: pl.DataFrame, planned: int, done: int) -> None:
    print(
        f"\nsweep: {planned} units planned, {done} done, {failures.height} failed,"
        f" {planned - done - failures.height} not run yet"
    )
    with pl.Config(
        tbl_rows=40, tbl_cols=16, fmt_str_lengths=50, tbl_width_chars=160, float_precision=3
    ):
        if top.height:
            print("\nscore (headline metric, ranked site, test split):")
            print(
                top.pivot(on="model", index=["suite", "task", "metric"], values="score").sort(
                    "suite", "task"
                )
            )
        if failures.height:
            print("\nfailed units:")
            print(failures.select("unit", "model", "suite", "group", "error_type", "message"))
