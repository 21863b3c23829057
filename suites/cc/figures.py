"""Plots of the CC suite: accuracy per layer (the paper's Figure 1), layer x value heatmaps
(Figures 2-4), and the semantic accuracies per calibration method."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from suites.plots import bars, heatmap, layer_curves


def slug(text: str) -> str:
    """A file-name-safe form of a model name."""
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")


def syntax_figures(
    layers: pl.DataFrame, values: pl.DataFrame, folder: str | Path, prefix: str = ""
) -> list[Path]:
    """Accuracy per layer per feature (one line per model/init; mean and std over seeds) and one
    heatmap of accuracy over layer x feature value per model, init and feature."""
    out = Path(folder)
    written = []
    curves = layers.group_by("model", "init", "feature", "layer").agg(
        pl.col("accuracy").mean(),
        pl.col("accuracy").std().fill_null(0).alias("std"),
        pl.len().alias("n_seeds"),
        *(pl.col(c).first() for c in ("ci_low", "ci_high") if c in layers.columns),
    )
    # one data seed: the band is the bootstrap interval of the test accuracy; several: ± std
    one_seed = "ci_low" in curves.columns and bool((curves["n_seeds"] == 1).all())
    band_words = "95% bootstrap interval" if one_seed else "± std over data seeds"
    for (feature,), rows in curves.group_by("feature", maintain_order=True):
        written.append(
            layer_curves(
                rows,
                out / f"{prefix}accuracy_per_layer_{feature}.png",
                y="accuracy",
                line=["model", "init"],
                error="std",
                band=("ci_low", "ci_high") if one_seed else None,
                ylabel="test accuracy",
                title=f"CC probe, D_{feature}: accuracy per layer (held-apart vocabulary;"
                f" band: {band_words})",
            )
        )
    if values.height == 0:
        return written
    for (model, init, feature), rows in values.group_by(
        "model", "init", "feature", maintain_order=True
    ):
        written.append(
            heatmap(
                rows,
                out / f"{prefix}heatmap_{slug(str(model))}_{init}_{feature}.png",
                rows="layer",
                columns="value",
                value="accuracy",
                title=f"{model} ({init}), D_{feature}: accuracy per layer x {feature}",
            )
        )
    return written


def semantic_figures(accuracies: pl.DataFrame, folder: str | Path) -> list[Path]:
    """Per model: accuracy on S1-S3 uncalibrated and with each calibration (bars)."""
    written = []
    for (model,), rows in accuracies.filter(pl.col("schema") != "S4").group_by(
        "model", maintain_order=True
    ):
        labelled = rows.with_columns(
            (pl.col("schema") + " / " + pl.col("calibration")).alias("test / calibration")
        )
        written.append(
            bars(
                labelled,
                Path(folder) / f"semantic_accuracy_{slug(str(model))}.png",
                label="test / calibration",
                value="accuracy",
                title=f"{str(model).split('/')[-1]}: CC semantic accuracy",
            )
        )
    return written
