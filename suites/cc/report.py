"""Re-rendering a cc unit folder (`lingprobe report`): the per-layer figures from its parquet
files and the accuracy curve per model and feature."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from suites.cc import figures

SYNTAX = "cc-syntax"  # the manifest name of a cc unit folder


def report_syntax(folder: Path) -> None:
    """The figures of a cc folder and its test accuracy per layer, printed."""
    layers = pl.read_parquet(folder / "layers.parquet")
    figures.syntax_figures(layers, pl.read_parquet(folder / "values.parquet"), folder)
    summary = (
        layers.group_by("model", "init", "feature", "layer")
        .agg(pl.col("accuracy").mean())
        .sort("model", "init", "feature", "layer")
    )
    print("test accuracy per layer (held-apart vocabulary; mean over seeds):")
    for (model, init, feature), rows in summary.group_by(
        "model", "init", "feature", maintain_order=True
    ):
        curve = " ".join(f"{a:.3f}" for a in rows["accuracy"])
        top = rows["layer"].max()
        print(f"  {model!s} ({init!s}), D_{feature!s}, layers 0..{top!s}: {curve}")
