"""Edge-probing outputs: parquet tables, PNG plots, and the tables printed for people."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from suites.datasets.errors import DataNotFoundError
from suites.edge.experiment import (
    SUITE,
    EdgeResults,
    drop_table,
    pretrained_vs_random,
    with_test_sets,
)
from suites.outputs import write_manifest, write_table
from suites.plots import layer_curves

SCORES, HEURISTICS = "scores.parquet", "heuristics.parquet"


def unit_name(model: str, init: str, task: str) -> str:
    """File stem of one (model, init, task) unit."""
    return "__".join(part.replace("/", "_").replace(":", "-") for part in (model, init, task))


def save_unit(results: EdgeResults, out: Path, legacy_keys: bool) -> None:
    """Write one run's scores and heuristic table under `out/units/`."""
    units = out / "units"
    for (model, init, task), rows in results.scores.group_by("model", "init", "task"):
        write_table(rows, units / f"{unit_name(str(model), str(init), str(task))}.{SCORES}")
    task_name = str(results.meta["task"])
    stem = unit_name("data", "legacy" if legacy_keys else "correct", task_name)
    write_table(
        results.heuristics.with_columns(legacy_keys=pl.lit(legacy_keys)),
        units / f"{stem}.{HEURISTICS}",
    )
    write_manifest(out, SUITE, task=task_name)


def load_tables(out: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """All units' scores and heuristic tables of an output folder."""
    units = out / "units"
    scores = sorted(units.glob(f"*.{SCORES}"))
    tables = sorted(units.glob(f"*.{HEURISTICS}"))
    if not scores:
        raise DataNotFoundError(f"{units} holds no edge scores; run `lingprobe run edge` first")
    return (
        pl.concat([pl.read_parquet(p) for p in scores], how="diagonal"),
        pl.concat([pl.read_parquet(p) for p in tables], how="diagonal"),
    )


def render(out: Path, *, echo: bool = True) -> dict[str, pl.DataFrame]:
    """Merge units, write the summary tables and plots, print them; returns the tables."""
    scores, table2 = load_tables(out)
    return render_tables(scores, table2, out, echo=echo)


def render_tables(
    scores: pl.DataFrame, table2: pl.DataFrame, out: Path, *, echo: bool = True
) -> dict[str, pl.DataFrame]:
    """Summary tables and plots of already merged scores and heuristic tables, into `out`."""
    drops = drop_table(scores)
    versus = pretrained_vs_random(scores)
    tables = {"heuristics": table2, "drops": drops, "pretrained_vs_random": versus}
    for name, frame in tables.items():
        write_table(frame, out / f"{name}.parquet")
    write_table(scores, out / "all_scores.parquet")
    _plots(scores, out)
    if echo:
        _print(tables)
    return tables


def _plots(scores: pl.DataFrame, out: Path) -> None:
    chosen = with_test_sets(scores).filter(
        (pl.col("variant") == "task") & pl.col("test_set").is_in(["original", "mem_exact"])
    )
    for (task,), rows in chosen.group_by("task"):
        mean = rows.group_by("model", "init", "test_set", "layer").agg(
            (pl.col("value").mean() * 100).alias("value"),
            (pl.col("value").std().fill_null(0) * 100).alias("std"),
        )
        lines = (
            ["init", "test_set"] if mean["model"].n_unique() == 1 else ["model", "init", "test_set"]
        )
        layer_curves(
            mean,
            out / "plots" / f"{str(task).replace('/', '_').replace(':', '-')}.png",
            line=lines,
            error="std",
            ylabel="accuracy (%)",
            title=f"{task}: pretrained vs random, original vs Mem-Exact-filtered test",
        )


def _print(tables: dict[str, pl.DataFrame]) -> None:
    with pl.Config(
        tbl_rows=60,
        tbl_cols=12,
        fmt_str_lengths=40,
        float_precision=2,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
    ):
        print("\nHeuristic accuracy on the test set (%) — paper Table 2")
        print(tables["heuristics"].select("task", "legacy_keys", "heuristic", "accuracy"))
        drops = tables["drops"]
        last = drops.group_by("task", "model", "init").agg(pl.col("layer").max())
        print("\nDrop %Δ on filtered test sets at the last layer — paper Tables 3-4")
        print(
            drops.join(last, on=["task", "model", "init", "layer"]).select(
                "task", "init", "heuristic", "original", "filtered", "drop_pct"
            )
        )
        print("\nAccuracy (%) on the Mem-Exact-filtered test set, per layer — paper Tables 5-6")
        versus = tables["pretrained_vs_random"]
        print(versus.drop("model") if versus["model"].n_unique() == 1 else versus)
