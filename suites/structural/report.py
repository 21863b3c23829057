"""Structural-probe outputs: `structural.parquet` (results schema), plots by layer, the best-layer
table."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from suites.outputs import write_table
from suites.plot_style import label
from suites.plots import layer_curves
from suites.structural.experiment import BASELINE

TABLE = "structural.parquet"
SELECT_BY = {"uuas": "distance", "root_acc": "depth"}  # the metric that picks a kind's best layer
TITLES = {
    "uuas": "UUAS (spanning tree of predicted distances vs gold edges, punctuation excluded)",
    "dspr": "DSpr. (Spearman of distances, mean over sentence lengths 5-50)",
    "root_acc": "Root accuracy (the least deep word is the root)",
    "nspr": "NSpr. (Spearman of depths, mean over sentence lengths 5-50)",
}
KEYS = ["model", "init", "task", "variant", "metric"]


def by_layer(frame: pl.DataFrame, split: str = "test") -> pl.DataFrame:
    """Mean and std over seeds per model, init, task, variant (rank), metric and layer; the
    baseline repeated at every probed layer so that it draws as a line."""
    rows = frame.filter(pl.col("split") == split)
    probed = rows.filter(pl.col("model") != BASELINE)
    mean = probed.group_by([*KEYS, "layer"]).agg(
        value=pl.col("value").mean(), std=pl.col("value").std()
    )
    base = (
        rows.filter(pl.col("model") == BASELINE)
        .unique(KEYS)
        .select(*KEYS, "value")
        .join(probed.select("task", "layer").unique(), on="task")
        .with_columns(std=pl.lit(None, dtype=pl.Float64))
    )
    return pl.concat([mean, base.select(mean.columns)]).sort([*KEYS, "layer"])


def best_layers(frame: pl.DataFrame) -> pl.DataFrame:
    """Per model, init, task and variant: the layer with the best mean dev score (UUAS for
    distance, root accuracy for depth) and its mean test metrics; the baseline's test metrics."""
    dev = by_layer(frame, "dev").filter(pl.col("model") != BASELINE)
    chosen = (
        dev.filter(pl.col("metric").is_in(list(SELECT_BY)))
        .sort("value", descending=True)
        .group_by("model", "init", "task", "variant", maintain_order=True)
        .first()
        .select("model", "init", "task", "variant", "layer")
    )
    test = by_layer(frame, "test")
    probed = chosen.join(test, on=["model", "init", "task", "variant", "layer"])
    base = test.filter(pl.col("model") == BASELINE).unique(KEYS)
    base = base.with_columns(layer=pl.lit(None, dtype=pl.Int64))
    wide = pl.concat([probed, base.select(probed.columns)]).pivot(
        on="metric", index=["model", "init", "task", "variant", "layer"], values="value"
    )
    return wide.sort("task", "model", "init", "variant")


def render_structural(frame: pl.DataFrame, out: str | Path) -> list[Path]:
    """One PNG per metric (test split, by layer, every model and init against the baseline)."""
    folder = Path(out)
    paths = []
    curves = by_layer(frame, "test")
    for metric, title in TITLES.items():
        rows = curves.filter(pl.col("metric") == metric)
        if rows.height:
            paths.append(
                layer_curves(
                    rows,
                    folder / f"{metric}_by_layer.png",
                    line=["model", "init"]
                    + (["variant"] if rows["variant"].n_unique() > 1 else []),
                    error="std",
                    title=f"{title}; test split, band: std over seeds",
                    ylabel=label(metric),
                )
            )
    return paths


def write_structural(frame: pl.DataFrame, out: str | Path) -> list[Path]:
    """`out/structural.parquet` and the plots of `render_structural`."""
    folder = Path(out)
    return [write_table(frame, folder / TABLE), *render_structural(frame, folder)]


def print_best(rows: pl.DataFrame) -> None:
    """The best-layer table (dev picks the layer, test metrics shown), the baseline beside it."""
    print("\nBest layer per model (chosen on dev; test UUAS, DSpr., root accuracy, NSpr.):")
    show(best_layers(rows))


def show(frame: pl.DataFrame) -> None:
    """A table printed in full width."""
    with pl.Config(tbl_rows=60, tbl_cols=12, fmt_str_lengths=40, tbl_width_chars=200):
        print(frame)
