"""Summaries and plots of a curriculum results folder (what `lingprobe report` renders).

Summary tables (all sites): `learning_curves.parquet`, `hypothesis_only.parquet`,
`v_information.parquet`, `cross_distribution_matrix.parquet`. Plots (the last site of each
phenomenon): inoculation curves, full vs hypothesis-only bars, V-information bars,
cross-distribution heatmaps and zero-shot MCC bars, under `plots/`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import polars as pl

from suites.curriculum.cross_distribution import cross_matrix
from suites.curriculum.hypothesis_only import hypothesis_gap
from suites.curriculum.inoculation import learning_curves
from suites.curriculum.pvi import v_information_table
from suites.outputs import MANIFEST, read_manifest, write_table
from suites.plots import bars, heatmap, save_figure


def _gather(folders: Sequence[Path], name: str) -> pl.DataFrame | None:
    """One table of every phenomenon the folders' manifests list (all sub-folders of a folder
    without a manifest)."""
    parts = []
    for folder in folders:
        listed = read_manifest(folder).get("phenomena") if (folder / MANIFEST).exists() else None
        parts += [
            p
            for p in sorted(folder.glob(f"*/{name}.parquet"))
            if listed is None or p.parent.name in listed
        ]
    return pl.concat([pl.read_parquet(p) for p in parts], how="diagonal") if parts else None


def last_site(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows of each phenomenon's last (deepest) site, and rows without a site (fine-tuning)."""
    deepest = pl.col("site") == pl.col("site").max().over("phenomenon")
    return frame.filter(pl.col("site").is_null() | deepest)


def inoculation_plot(curves: pl.DataFrame, path: Path, title: str) -> Path:
    """Test accuracy against examples per label (log axis), one line per input; band: the 95%
    bootstrap interval of the seed mean (± std over seeds where the run kept no interval)."""
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    with_ci = "ci_low" in curves.columns and curves["ci_low"].null_count() < curves.height
    for (name,), rows in curves.sort("n_per_label").group_by(["input"], maintain_order=True):
        xs, ys = rows["n_per_label"].to_list(), rows["mean"].to_list()
        ax.plot(xs, ys, marker="o", ms=3, label=str(name))
        if with_ci:
            low = rows["ci_low"].fill_null(rows["mean"]).to_list()
            high = rows["ci_high"].fill_null(rows["mean"]).to_list()
        else:
            err = rows["std"].fill_null(0).to_list()
            low, high = [a - b for a, b in zip(ys, err)], [a + b for a, b in zip(ys, err)]
        ax.fill_between(xs, low, high, alpha=0.2)
    title = f"{title} (band: {'95% bootstrap interval' if with_ci else '± std over seeds'})"
    ax.set_xscale("log")
    ax.set_xlabel("training examples per label")
    ax.set_ylabel("test accuracy")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def gap_plot(gap: pl.DataFrame, path: Path) -> Path:
    """Grouped bars: full-input vs hypothesis-only test accuracy per phenomenon."""
    rows = gap.sort("phenomenon")
    names = rows["phenomenon"].to_list()
    fig, ax = plt.subplots(figsize=(max(4.5, 0.9 * len(names) + 2), 3.8))
    positions = range(len(names))
    ax.bar(
        [p - 0.2 for p in positions], rows["full_mean"].to_list(), 0.4, label="premise+hypothesis"
    )
    ax.bar(
        [p + 0.2 for p in positions],
        rows["hypothesis_mean"].to_list(),
        0.4,
        label="hypothesis only",
    )
    ax.set_xticks(list(positions), names, rotation=40, ha="right", fontsize=7)
    ax.set_ylabel("test accuracy")
    ax.set_title("full input vs hypothesis-only (largest N)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def summarise(folder: str | Path, sources: Sequence[Path] | None = None) -> dict[str, pl.DataFrame]:
    """Write the summary tables and plots of a results folder (of the phenomena in `sources`,
    curriculum folders of one model: default the folder itself); return the summaries."""
    out = Path(folder)
    read = list(sources) if sources is not None else [out]
    plots = out / "plots"
    summaries: dict[str, pl.DataFrame] = {}
    inoc = _gather(read, "inoculation")
    if inoc is not None:
        curves = learning_curves(inoc)
        summaries["learning_curves"] = curves
        for (name,), rows in last_site(curves).group_by(["phenomenon"]):
            inoculation_plot(rows, plots / f"inoculation_{name}.png", f"inoculation: {name}")
        if set(inoc["input"].unique()) >= {"pair", "hypothesis"}:
            gap = hypothesis_gap(inoc.filter(pl.col("input").is_in(["pair", "hypothesis"])))
            summaries["hypothesis_only"] = gap
            gap_plot(last_site(gap), plots / "hypothesis_only.png")
    pvi = _gather(read, "pvi")
    if pvi is not None:
        vinfo = v_information_table(pvi)
        summaries["v_information"] = vinfo
        chosen = last_site(vinfo).filter(split="test")
        if chosen.height:
            bars(
                chosen,
                plots / "v_information.png",
                label="phenomenon",
                value="v_information",
                title="V-information (val, bits)",
            )
    cross = _gather(read, "cross_distribution")
    if cross is not None:
        matrix = cross_matrix(cross)
        summaries["cross_distribution_matrix"] = matrix
        for (name,), rows in last_site(matrix).group_by(["phenomenon"]):
            heatmap(
                rows.with_columns(train=pl.col("train_half"), test=pl.col("test_half")),
                plots / f"cross_distribution_{name}.png",
                rows="train",
                columns="test",
                value="mean",
                title=f"cross-distribution accuracy: {name}",
            )
    zero = out / "zero_shot.parquet"
    if zero.exists():
        table = pl.read_parquet(zero)
        summaries["zero_shot"] = table
        bars(
            table,
            plots / "zero_shot_mcc.png",
            label="phenomenon",
            value="mcc",
            title="zero-shot MCC",
        )
    for name, table in summaries.items():
        if name != "zero_shot":
            write_table(table, out / f"{name}.parquet")
    return summaries


def print_report(out: Path) -> None:
    """Write the summary tables and plots of a curriculum folder and print the headlines."""
    summaries = summarise(out)
    headlines = {
        "zero_shot": ("zero-shot", ["phenomenon", "mcc", "accuracy"]),
        "hypothesis_only": (
            "full vs hypothesis-only (test accuracy, last site)",
            ["phenomenon", "n_per_label", "full_mean", "hypothesis_mean", "gap"],
        ),
        "v_information": (
            "V-information (bits, last site)",
            ["phenomenon", "split", "v_information", "n_items"],
        ),
        "cross_distribution_matrix": (
            "cross-distribution accuracy (last site)",
            ["phenomenon", "train_half", "test_half", "mean", "std"],
        ),
    }
    with pl.Config(tbl_rows=60, tbl_cols=12, fmt_str_lengths=30):
        for name, (title, columns) in headlines.items():
            if name in summaries:
                table = summaries[name]
                table = last_site(table) if "site" in table.columns else table
                print(f"{title}:\n{table.select(columns)}")
    print(f"summaries and plots in {out}/")
