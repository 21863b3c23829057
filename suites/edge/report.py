"""Edge-probing outputs: parquet tables, PNG plots, and the tables printed for people."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from probes import seed_scores
from suites.datasets.errors import DataNotFoundError
from suites.edge.experiment import (
    EdgeResults,
    drop_table,
    pretrained_vs_random,
    with_test_sets,
)
from suites.edge.uncertainty_tables import (
    printable_versus,
    scores_with_intervals,
    versus_with_tests,
)
from suites.outputs import safe_name, write_table
from suites.plot_style import label, short_model
from suites.plots import bars, layer_curves

SCORES, HEURISTICS = "scores.parquet", "heuristics.parquet"
INTERVALS, COMPARISONS = "intervals.parquet", "comparison.parquet"


def unit_name(model: str, init: str, task: str) -> str:
    """File stem of one (model, init, task) unit."""
    return "__".join(safe_name(part) for part in (model, init, task))


def save_unit(results: EdgeResults, out: Path, legacy_keys: bool) -> None:
    """Write one run's scores and heuristic table under `out/units/` (the caller writes the
    folder's manifest, which covers every task)."""
    units = out / "units"
    for (model, init, task), rows in results.scores.group_by("model", "init", "task"):
        write_table(rows, units / f"{unit_name(str(model), str(init), str(task))}.{SCORES}")
    for (model, init, task), rows in _groups(results.intervals, ["model", "init", "task"]):
        write_table(rows, units / f"{unit_name(str(model), str(init), str(task))}.{INTERVALS}")
    for (model, task), rows in _groups(results.comparisons, ["model", "task"]):
        stem = unit_name(str(model), "pretrained-vs-random", str(task))
        write_table(rows, units / f"{stem}.{COMPARISONS}")
    task_name = str(results.meta["task"])
    stem = unit_name("data", "legacy" if legacy_keys else "correct", task_name)
    write_table(
        results.heuristics.with_columns(legacy_keys=pl.lit(legacy_keys)),
        units / f"{stem}.{HEURISTICS}",
    )


def _groups(frame: pl.DataFrame, keys: list[str]) -> list[tuple[tuple, pl.DataFrame]]:
    return list(frame.group_by(keys)) if frame.height else []


def load_uncertainty(out: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """All units' score intervals and pretrained-vs-random comparisons (empty when none)."""
    found = []
    for suffix in (INTERVALS, COMPARISONS):
        paths = sorted((out / "units").glob(f"*.{suffix}"))
        frames = [pl.read_parquet(p) for p in paths]
        found.append(pl.concat(frames, how="diagonal") if frames else pl.DataFrame())
    return found[0], found[1]


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
    intervals, comparisons = load_uncertainty(out)
    return render_tables(
        scores, table2, out, echo=echo, intervals=intervals, comparisons=comparisons
    )


def render_tables(
    scores: pl.DataFrame,
    table2: pl.DataFrame,
    out: Path,
    *,
    echo: bool = True,
    intervals: pl.DataFrame | None = None,
    comparisons: pl.DataFrame | None = None,
) -> dict[str, pl.DataFrame]:
    """Summary tables and plots of already merged scores and heuristic tables, into `out`;
    with `intervals`/`comparisons` (`suites.edge.intervals`) the scores carry 95% intervals and
    pretrained-vs-random its paired test."""
    intervals = intervals if intervals is not None else pl.DataFrame()
    comparisons = comparisons if comparisons is not None else pl.DataFrame()
    drops = drop_table(scores)
    versus = pretrained_vs_random(scores)
    tables = {"heuristics": table2, "drops": drops, "pretrained_vs_random": versus}
    tables["scores_ci"] = scores_with_intervals(scores, intervals)
    tested = versus_with_tests(scores, intervals, comparisons)
    if tested.height:
        tables["pretrained_vs_random_tests"] = tested
    for name, frame in tables.items():
        write_table(frame, out / f"{name}.parquet")
    write_table(scores, out / "all_scores.parquet")
    _plots(scores, table2, out, tables["scores_ci"])
    if echo:
        _print(tables)
    return tables


def _plots(scores: pl.DataFrame, table2: pl.DataFrame, out: Path, with_ci: pl.DataFrame) -> None:
    """Per task: the metric per layer (pretrained vs random, original vs Mem-Exact-filtered,
    bands: 95% bootstrap intervals, or ± std over seeds without them), the heuristics'
    accuracy, the drop per layer on each filtered set, selectivity per layer."""
    marked = with_test_sets(scores)
    drops = drop_table(scores)
    for (task,), rows in marked.group_by("task"):
        stem = out / "plots" / str(task).replace("/", "_").replace(":", "-")
        metric = label(rows["metric"][0])
        models = ", ".join(sorted({short_model(m) for m in rows["model"].unique().to_list()}))
        single = rows["model"].n_unique() == 1
        who = ["init"] if single else ["model", "init"]
        chosen = rows.filter(
            (pl.col("variant") == "task") & pl.col("test_set").is_in(["original", "mem_exact"])
        )
        mean = chosen.group_by("model", "init", "test_set", "layer").agg(
            (pl.col("value").mean() * 100).alias("value"),
            (pl.col("value").std().fill_null(0) * 100).alias("std"),
        )
        bounds = with_ci.filter((pl.col("task") == task) & (pl.col("variant") == "task"))
        has_ci = bounds.height > 0 and bounds["ci_low"].null_count() < bounds.height
        if has_ci:
            keys = ["model", "init", "test_set", "layer"]
            mean = mean.join(bounds.select(*keys, "ci_low", "ci_high"), on=keys, how="left")
        band = "95% bootstrap interval" if has_ci else "± std over seeds"
        layer_curves(
            mean,
            f"{stem}.png",
            line=[*who, "test_set"],
            error="std",
            band=("ci_low", "ci_high") if has_ci else None,
            ylabel=f"{metric} (%)",
            title=f"{models} on {task}: {metric} per layer, pretrained vs random twin,"
            f" original vs Mem-Exact-filtered test (band: {band})",
        )
        heuristics = table2.filter(pl.col("task") == task)
        if heuristics.height:
            bars(
                heuristics.with_columns(pl.col("heuristic").map_elements(label, pl.String)),
                f"{stem}_heuristics.png",
                label="heuristic",
                value="accuracy",
                xlabel="accuracy on the test set (%)",
                title=f"{task}: accuracy of the annotation-artifact heuristics (paper Table 2)",
                fmt="{:.1f}",
            )
        layer_curves(
            drops.filter(pl.col("task") == task).with_columns(test_set=pl.col("heuristic")),
            f"{stem}_drops.png",
            y="drop_pct",
            line=[*who, "test_set"],
            title=f"{models} on {task}: drop of {metric} on each filtered test set, per layer",
        )
        original = rows.filter(pl.col("split") == "test")
        if set(original["variant"].unique()) == {"task", "control"}:
            keys = ["model", "init", "layer"]
            selectivity = seed_scores(original, keys).select(
                *keys, value=pl.col("selectivity") * 100
            )
            layer_curves(
                selectivity,
                f"{stem}_selectivity.png",
                line=who,
                ylabel=f"selectivity: task − control {metric} (points)",
                title=f"{models} on {task}: selectivity per layer (Hewitt & Liang 2019)",
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
        print("\nHeuristic accuracy (%) on the test set — paper Table 2")
        print(tables["heuristics"].select("task", "legacy_keys", "heuristic", "accuracy"))
        print(
            "  Mem-Freq answers only where a span's train labels are skewed (not one label, not"
            " equal counts; the reference code's rule), so it is low where most spans have one"
            " label (e.g. deprel's word pairs)."
        )
        drops = tables["drops"]
        last = drops.group_by("task", "model", "init").agg(pl.col("layer").max())
        print(
            "\nAccuracy (%) on the original and each filtered test set, and the drop"
            " %Δ = (original − filtered) × 100 / original, at the last layer — paper Tables 3-4"
        )
        print(
            drops.join(last, on=["task", "model", "init", "layer"]).select(
                "task", "init", "heuristic", "original", "filtered", "drop_pct"
            )
        )
        print("\nAccuracy (%) on the Mem-Exact-filtered test set, per layer — paper Tables 5-6")
        versus = tables["pretrained_vs_random"]
        print(versus.drop("model") if versus["model"].n_unique() == 1 else versus)
        tested = tables.get("pretrained_vs_random_tests")
        if tested is not None:
            print(
                "\nPretrained vs random per layer (score % [95% bootstrap CI]; difference in"
                " points, paired permutation test, p_holm: Holm over the layers of a test set;"
                " * where p_holm < 0.05)"
            )
            shown = printable_versus(
                tested.filter(pl.col("split").is_in(["test", "test:mem_exact"]))
            )
            with pl.Config(tbl_width_chars=180):
                print(shown.drop("model") if shown["model"].n_unique() == 1 else shown)
