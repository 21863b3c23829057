"""Structural-probe outputs: `structural.parquet`, plots by layer, and the best-layer table."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from suites.outputs import write_manifest, write_table
from suites.plots import layer_curves
from suites.structural.experiment import BASELINE

TABLE = "structural.parquet"
SELECT_BY = {"distance": "uuas", "depth": "root_acc"}  # the metric that picks the best layer
TITLES = {
    "uuas": "UUAS (MST of predicted distances vs gold, punctuation excluded)",
    "dspr": "DSpr. (Spearman of distances, mean over lengths 5-50)",
    "root_acc": "Root accuracy (least deep word is the root)",
    "nspr": "NSpr. (Spearman of depths, mean over lengths 5-50)",
}


def by_layer(frame: pl.DataFrame, split: str = "test") -> pl.DataFrame:
    """Mean and std over seeds (and ranks) per model, init, task, metric and layer; the
    baseline repeated at every layer of the probed subjects so it draws as a line."""
    probed = frame.filter((pl.col("model") != BASELINE) & (pl.col("split") == split))
    keys = ["model", "init", "task", "metric", "layer"]
    mean = probed.group_by(keys).agg(value=pl.col("value").mean(), std=pl.col("value").std())
    layers = probed.select("layer").unique()
    base = (
        frame.filter((pl.col("model") == BASELINE) & (pl.col("split") == split))
        .select("model", "init", "task", "metric", "value")
        .join(layers, how="cross")
        .with_columns(std=pl.lit(None, dtype=pl.Float64))
    )
    return pl.concat([mean, base.select(mean.columns)]).sort(keys)


def best_layers(frame: pl.DataFrame) -> pl.DataFrame:
    """Per model, init and task: the layer whose mean dev score is best (UUAS for distance,
    root accuracy for depth), with its mean test metrics; the baseline's test metrics too."""
    dev = by_layer(frame, "dev").filter(pl.col("model") != BASELINE)
    selectors = pl.DataFrame({"task": list(SELECT_BY), "metric": list(SELECT_BY.values())})
    chosen = (
        dev.join(selectors, on=["task", "metric"])
        .sort("value", descending=True)
        .group_by("model", "init", "task", maintain_order=True)
        .first()
        .select("model", "init", "task", "layer")
    )
    test = by_layer(frame, "test")
    probed = chosen.join(test, on=["model", "init", "task", "layer"])
    base = test.filter(pl.col("model") == BASELINE).unique(["task", "metric"])
    base = base.with_columns(layer=pl.lit(None, dtype=pl.Int64))
    wide = pl.concat([probed, base.select(probed.columns)]).pivot(
        on="metric", index=["model", "init", "task", "layer"], values="value"
    )
    return wide.sort("task", "model", "init")


def write_structural(frame: pl.DataFrame, out: str | Path) -> list[Path]:
    """`out/structural.parquet`, one PNG per metric (test split, by layer), the manifest."""
    folder = Path(out)
    paths = [write_table(frame, folder / TABLE)]
    curves = by_layer(frame, "test")
    for metric, title in TITLES.items():
        rows = curves.filter(pl.col("metric") == metric)
        if rows.height:
            paths.append(
                layer_curves(
                    rows,
                    folder / f"{metric}_by_layer.png",
                    line=["model", "init"],
                    error="std",
                    title=title,
                    ylabel=metric,
                )
            )
    write_manifest(folder, "structural")
    return paths
