"""Rendering a sweep folder (`lingprobe report DIR`): the merged leaderboard, a score heatmap,
the suites' own summaries over all units, and the failures.

  leaderboard.parquet, failures.parquet, failures.json   (re-merged from the unit records)
  scores.png        headline score (ranked site, whole train set, full test set) model x dataset
  holmes/           `suites.holmes.summary.write_summary` of every Holmes row (rankings by mean
                    winning rate, Kendall τ, discriminability, plots) when two models ran
  edge/             `suites.edge.report.render_tables` of every edge unit (drop tables, plots)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from suites.edge.report import load_tables, render_tables
from suites.holmes.summary import HolmesSummary, write_summary
from suites.outputs import read_manifest
from suites.plots import heatmap
from suites.sweep.merge import write_merged
from suites.sweep.units import UNITS

HEADLINE_TEST_SETS = ("test", "original")  # Holmes' test split; edge's unfiltered test set


@dataclass(frozen=True)
class SweepReport:
    """The tables a report rendered."""

    leaderboard: pl.DataFrame
    failures: pl.DataFrame
    headline: pl.DataFrame  # model x dataset scores
    holmes: HolmesSummary | None


def headline(board: pl.DataFrame) -> pl.DataFrame:
    """One score per (suite, dataset, model): ranked site, fraction 1, full test set."""
    return board.filter(
        pl.col("ranked")
        & (pl.col("fraction") == 1.0)
        & pl.col("test_set").is_in(HEADLINE_TEST_SETS)
    ).select("suite", "dataset", "model", "metric", "score", "sigma", "selectivity")


def render(out: Path, *, echo: bool = True) -> SweepReport:
    """Merge the planned units of `out`, write tables and plots, print the summary."""
    unit_ids = list(read_manifest(out).get("units", []))
    board, failures = write_merged(out, unit_ids)
    top = headline(board) if board.height else pl.DataFrame()
    holmes = None
    if top.height:
        heatmap(
            top.with_columns(dataset=pl.col("suite") + ":" + pl.col("dataset")),
            out / "scores.png",
            rows="model",
            columns="dataset",
            value="score",
            title="Score per model and dataset (ranked site)",
        )
        rows = board.filter(pl.col("suite") == "holmes")
        if rows.height:
            holmes = write_summary(rows, out / "holmes")
        _edge(out, board)
    if echo:
        _print(board, top, holmes, failures, len(unit_ids))
    return SweepReport(board, failures, top, holmes)


def _edge(out: Path, board: pl.DataFrame) -> None:
    """Edge tables and plots over every finished edge unit."""
    edge_units = board.filter(pl.col("suite") == "edge")["unit"].unique().sort().to_list()
    if not edge_units:
        return
    parts = [load_tables(out / UNITS / u) for u in edge_units]
    scores = pl.concat([p[0] for p in parts], how="diagonal")
    heuristics = pl.concat([p[1] for p in parts], how="diagonal").unique(maintain_order=True)
    render_tables(scores, heuristics, out / "edge", echo=False)


def _print(
    board: pl.DataFrame,
    top: pl.DataFrame,
    holmes: HolmesSummary | None,
    failures: pl.DataFrame,
    planned: int,
) -> None:
    done = board["unit"].n_unique() if board.height else 0
    print(
        f"\nsweep: {planned} units planned, {done} done, {failures.height} failed,"
        f" {planned - done - failures.height} not run yet"
    )
    with pl.Config(
        tbl_rows=40, tbl_cols=16, fmt_str_lengths=50, tbl_width_chars=160, float_precision=3
    ):
        if top.height:
            print("\nscore (ranked site, full train set, full test set):")
            print(
                top.pivot(on="model", index=["suite", "dataset"], values="score").sort(
                    "suite", "dataset"
                )
            )
        if holmes is not None and holmes.ranking is not None:
            print("\nHolmes ranking (mean winning rate):")
            print(holmes.ranking.filter(pl.col("group") == "overall").drop("group"))
        if failures.height:
            print("\nfailed units:")
            print(failures.select("unit", "model", "suite", "group", "error_type", "message"))
