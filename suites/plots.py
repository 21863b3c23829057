"""Shared plots (matplotlib, PNG): a metric per layer, heatmaps and bar charts, in one style.

Each kind has a `*_figure` function that returns the figure (tests read its texts and layout)
and a function that saves it. Colours, line styles, words and layout come from
`suites.plot_style`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import polars as pl
from matplotlib.figure import Figure

from suites import plot_style
from suites.plot_style import (
    MAX_INCHES,
    colour_for,
    fit,
    label,
    line_style,
    model_colour,
    reading_order,
    short_model,
)

CELL_TEXT_LIMIT = 400  # cells annotated with their value up to this many
TRANSPOSE_AT = 30  # a heatmap with more columns than this (and fewer rows) is turned


def layer_curves_figure(
    frame: pl.DataFrame,
    *,
    x: str = "layer",
    y: str = "value",
    line: str | Sequence[str] = "model",
    error: str | None = None,
    band: tuple[str, str] | None = None,
    title: str = "",
    ylabel: str = "",
    xlabel: str | None = None,
) -> Figure:
    """One line per group of `line` columns: `y` against `x`, with a band of ± `error` or from
    the `band` columns (low, high), e.g. a confidence interval.

    Colours follow the model and init columns; line styles the test set or variant; the
    legend lists the lines in reading order (`suites.plot_style.reading_order`).
    """
    groups = [line] if isinstance(line, str) else list(line)
    single = "model" not in frame.columns or frame["model"].n_unique() == 1
    fig, ax = plt.subplots(figsize=(8, 4))
    lines = [
        (dict(zip(groups, key)), rows)
        for key, rows in frame.sort(x).group_by(groups, maintain_order=True)
    ]
    for named, rows in sorted(lines, key=lambda line: reading_order(line[0])):
        text = " / ".join(short_model(v) if k == "model" else label(v) for k, v in named.items())
        xs, ys = rows[x].to_list(), rows[y].to_list()
        colour = colour_for(named, single)
        ax.plot(xs, ys, marker="o", ms=3, label=text, color=colour, ls=line_style(named))
        if band is not None:
            low = rows[band[0]].fill_null(rows[y]).to_list()
            high = rows[band[1]].fill_null(rows[y]).to_list()
            ax.fill_between(xs, low, high, alpha=0.15, color=colour)
        elif error is not None:
            err = rows[error].fill_null(0).to_list()
            low = [a - b for a, b in zip(ys, err)]
            high = [a + b for a, b in zip(ys, err)]
            ax.fill_between(xs, low, high, alpha=0.15, color=colour)
    ax.set_xlabel(xlabel or label(x))
    ax.set_ylabel(ylabel or label(y))
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fit(fig)


def layer_curves(frame: pl.DataFrame, path: str | Path, **options: object) -> Path:
    """Save `layer_curves_figure(frame, **options)` as PNG."""
    return save_figure(layer_curves_figure(frame, **options), path)  # type: ignore[arg-type]


def heatmap_figure(
    frame: pl.DataFrame,
    *,
    rows: str,
    columns: str,
    value: str = "value",
    title: str = "",
    fmt: str = "{:.2f}",
    colorbar: str | None = None,
    row_order: Sequence[object] | None = None,
    column_order: Sequence[object] | None = None,
) -> Figure:
    """Heatmap of `value` over `rows` x `columns` (mean where several rows share a cell).

    The figure grows with its cells up to `MAX_INCHES`; a very wide one is turned on its side.
    The colour bar says what it measures.
    """
    table = frame.group_by(rows, columns).agg(pl.col(value).mean())
    row_keys = list(row_order) if row_order is not None else sorted(table[rows].unique().to_list())
    col_keys = (
        list(column_order)
        if column_order is not None
        else sorted(table[columns].unique().to_list())
    )
    if len(col_keys) > TRANSPOSE_AT and len(col_keys) > len(row_keys):
        rows, columns, row_keys, col_keys = columns, rows, col_keys, row_keys
    cell = {(r, c): v for r, c, v in table.select(rows, columns, value).iter_rows()}
    grid = [[cell.get((r, c), float("nan")) for c in col_keys] for r in row_keys]
    width = min(MAX_INCHES, 2.8 + 0.5 * len(col_keys))
    height = min(MAX_INCHES, 1.8 + 0.32 * len(row_keys))
    fig, ax = plt.subplots(figsize=(max(4.5, width), max(3.0, height)))
    image = ax.imshow(grid, aspect="auto", cmap="viridis")
    names = [short_model(c) if columns == "model" else str(c) for c in col_keys]
    ax.set_xticks(range(len(col_keys)), names, rotation=60, ha="right", fontsize=7)
    names = [short_model(r) if rows == "model" else str(r) for r in row_keys]
    ax.set_yticks(range(len(row_keys)), names, fontsize=7)
    if len(row_keys) * len(col_keys) <= CELL_TEXT_LIMIT:
        for i, line in enumerate(grid):
            for j, v in enumerate(line):
                if v == v:
                    ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=6, color="w")
    ax.set_xlabel(label(columns))
    ax.set_ylabel(label(rows))
    ax.set_title(title, fontsize=9)
    bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.02)
    bar.set_label(colorbar or label(value))
    return fit(fig)


def heatmap(frame: pl.DataFrame, path: str | Path, **options: object) -> Path:
    """Save `heatmap_figure(frame, **options)` as PNG."""
    return save_figure(heatmap_figure(frame, **options), path)  # type: ignore[arg-type]


def bars_figure(
    frame: pl.DataFrame,
    *,
    label: str,
    value: str,
    title: str = "",
    xlabel: str | None = None,
    fmt: str = "{:.2f}",
    interval: tuple[str, str] | None = None,
) -> Figure:
    """Horizontal bars of `value` per `label`, best at the top, each bar's value written at its
    end (a zero is a marked value, not a missing bar); `interval` (low, high columns) draws
    error bars, e.g. a confidence interval."""
    ordered = frame.sort(value, nulls_last=False)
    names = ordered[label].cast(pl.String).to_list()
    values = ordered[value].to_list()
    shown = [short_model(n) if label == "model" else n for n in names]
    colours = [model_colour(n) if label == "model" else "#0072B2" for n in names]
    fig, ax = plt.subplots(figsize=(6.5, max(2.5, 0.3 * len(names) + 1.2)))
    ax.barh(shown, [v or 0.0 for v in values], color=colours)
    span = max((abs(v) for v in values if v is not None), default=1.0) or 1.0
    if interval is not None:
        low, high = (ordered[c].to_list() for c in interval)
        for i, (v, a, b) in enumerate(zip(values, low, high)):
            if v is not None and a is not None and b is not None and a == a and b == b:
                ax.errorbar([v], [i], xerr=[[v - a], [b - v]], color="black", capsize=3, lw=1)
                span = max(span, abs(b))
    for i, v in enumerate(values):
        if v is None:
            ax.text(0, i, " no value", va="center", fontsize=7, color="grey")
            continue
        ax.plot([v], [i], marker="|", color="black", ms=8)
        ax.text(v + 0.01 * span, i, fmt.format(v), va="center", fontsize=7)
    ax.set_xlim(min(0.0, *(v for v in values if v is not None)), span * 1.12)
    ax.set_xlabel(xlabel or plot_style.label(value))  # `label` is the column parameter here
    ax.set_title(title, fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    return fit(fig)


def bars(frame: pl.DataFrame, path: str | Path, **options: object) -> Path:
    """Save `bars_figure(frame, **options)` as PNG."""
    return save_figure(bars_figure(frame, **options), path)  # type: ignore[arg-type]


def save_figure(fig: Figure, path: str | Path) -> Path:
    """Save a figure as PNG atomically (temporary file + rename) and close it."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp.png")
    fig.savefig(tmp, dpi=120)
    plt.close(fig)
    tmp.replace(target)
    return target
