"""Shared plots (matplotlib, PNG): a metric per layer, heatmaps and bar charts, in one style.

Each kind has a `*_figure` function that returns the figure (tests read its texts and layout)
and a function that saves it. Lines and heatmaps are built as `suites.figure_model`
descriptions (`layer_lines`, `heatmap_model`) and drawn by `draw_lines` / `draw_heatmap`; the
explorer draws the same descriptions with plotly. Colours, line styles, words and layout come
from `suites.plot_style`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import polars as pl
from matplotlib.figure import Figure

from suites import plot_style
from suites.figure_model import (
    MPL_DASHES,
    Axes,
    ColourScale,
    HeatmapFigure,
    Line,
    LineFigure,
    heatmap_model,
)
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
DASH_STYLES = {dash: style for style, dash in MPL_DASHES.items()}


def layer_curves_figure(frame: pl.DataFrame, **options: Any) -> Figure:
    """One line per group of `line` columns: `y` against `x`, with a band of ± `error` or from
    the `band` columns (low, high), e.g. a confidence interval (`options`: `layer_lines`'s).

    Colours follow the model and init columns; line styles the test set or variant; the
    legend lists the lines in reading order (`suites.plot_style.reading_order`).
    """
    return draw_lines(layer_lines(frame, **options))


def layer_lines(
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
) -> LineFigure:
    """The `LineFigure` of `layer_curves_figure` (one line per group of `line` columns)."""
    groups = [line] if isinstance(line, str) else list(line)
    single = "model" not in frame.columns or frame["model"].n_unique() == 1
    keyed = [
        (dict(zip(groups, key)), rows)
        for key, rows in frame.sort(x).group_by(groups, maintain_order=True)
    ]
    lines = []
    for named, rows in sorted(keyed, key=lambda line: reading_order(line[0])):
        text = " / ".join(short_model(v) if k == "model" else label(v) for k, v in named.items())
        xs, ys = tuple(rows[x].to_list()), tuple(rows[y].to_list())
        bounds = None
        if band is not None:
            bounds = (
                tuple(rows[band[0]].fill_null(rows[y]).to_list()),
                tuple(rows[band[1]].fill_null(rows[y]).to_list()),
            )
        elif error is not None:
            err = rows[error].fill_null(0).to_list()
            gap = float("nan")  # no point, no band
            bounds = (
                tuple(gap if a is None else a - b for a, b in zip(ys, err)),
                tuple(gap if a is None else a + b for a, b in zip(ys, err)),
            )
        lines.append(
            Line(
                name=text,
                x=xs,
                y=ys,
                colour=colour_for(named, single),
                dash=MPL_DASHES[line_style(named)],
                band=bounds,
            )
        )
    return LineFigure(Axes(title, xlabel or label(x), ylabel or label(y)), tuple(lines))


def draw_lines(model: LineFigure) -> Figure:
    """A `LineFigure` drawn with matplotlib (hidden lines left out; legend beside the axes)."""
    fig, ax = plt.subplots(figsize=(8, 4))
    for line in model.lines:
        if line.hidden:
            continue
        ys = [float("nan") if v is None else v for v in line.y]
        style = DASH_STYLES[line.dash]
        marker = {"marker": "o", "ms": 3} if line.markers else {}
        ax.plot(line.x, ys, label=line.name, color=line.colour, ls=style, **marker)  # type: ignore[arg-type]
        if line.band is not None:
            ax.fill_between(line.x, line.band[0], line.band[1], alpha=0.15, color=line.colour)
    if model.axes.x_log:
        ax.set_xscale("log")
    ax.set_xlabel(model.axes.x)
    ax.set_ylabel(model.axes.y)
    ax.set_title(model.axes.title, fontsize=9)
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
    values = frame[rows].unique().to_list() + frame[columns].unique().to_list()
    names = {v: short_model(v) for v in values}
    model = heatmap_model(
        frame,
        rows=rows,
        columns=columns,
        value=value,
        axes=Axes(title, label(columns), label(rows)),
        scale=ColourScale(colorbar or label(value)),
        row_order=row_order,
        column_order=column_order,
        row_names=names if rows == "model" else None,
        column_names=names if columns == "model" else None,
        cell_format=fmt,
    )
    if len(model.columns) > TRANSPOSE_AT and len(model.columns) > len(model.rows):
        model = model.turned()
    return draw_heatmap(model)


def draw_heatmap(model: HeatmapFigure) -> Figure:
    """A `HeatmapFigure` drawn with matplotlib: sized by its cells (up to `MAX_INCHES`), each
    cell's number written where there are at most `CELL_TEXT_LIMIT` cells."""
    grid = [[float("nan") if v is None else v for v in row] for row in model.values]
    width = min(MAX_INCHES, 2.8 + 0.5 * len(model.columns))
    height = min(MAX_INCHES, 1.8 + 0.32 * len(model.rows))
    fig, ax = plt.subplots(figsize=(max(4.5, width), max(3.0, height)))
    scale = model.scale
    image = ax.imshow(grid, aspect="auto", cmap=scale.colours, vmin=scale.low, vmax=scale.high)
    columns = [str(c) for c in model.columns]
    ax.set_xticks(range(len(columns)), columns, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(model.rows)), list(model.rows), fontsize=7)
    if model.cell_format and len(model.rows) * len(columns) <= CELL_TEXT_LIMIT:
        for i, line in enumerate(grid):
            for j, v in enumerate(line):
                if v == v:
                    text = model.cell_format.format(v)
                    ax.text(j, i, text, ha="center", va="center", fontsize=6, color="w")
    ax.set_xlabel(model.axes.x)
    ax.set_ylabel(model.axes.y)
    ax.set_title(model.axes.title, fontsize=9)
    bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.02)
    bar.set_label(scale.label)
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
