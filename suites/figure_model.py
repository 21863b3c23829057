"""One description of a figure, drawn by both renderers: matplotlib PNGs (`suites.plots`) and
the explorer's plotly figures (`suites.html.figures`).

A `LineFigure` holds lines (points, colour, dash, an optional band, a legend group, hidden
lines the reader can show); a `HeatmapFigure` holds a grid of values with its row and column
labels and a `ColourScale`. Both carry their `Axes` (title and axis words). Texts are plain:
each renderer escapes what its format needs. Builders that read tables (`heatmap_model`) live
here too, so the two renderers never compute a figure's numbers twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import polars as pl

Dash = Literal["solid", "dash", "dot", "dashdot"]
Number = float | int
XValue = float | int | str  # a point's x: a layer, a fraction, a size, or a category
MPL_DASHES: dict[str, Dash] = {"-": "solid", "--": "dash", ":": "dot", "-.": "dashdot"}


@dataclass(frozen=True)
class Axes:
    """A figure's words: title and axis labels; `x_log` puts x on a log scale."""

    title: str
    x: str
    y: str = ""
    x_log: bool = False


@dataclass(frozen=True)
class Line:
    """One line of a `LineFigure` (y None = no point there)."""

    name: str  # the legend entry
    x: tuple[XValue, ...]
    y: tuple[Number | None, ...]
    colour: str  # "#rrggbb"
    dash: Dash = "solid"
    markers: bool = True
    band: tuple[tuple[Number, ...], tuple[Number, ...]] | None = None  # (low, high) per point
    band_name: str = ""  # the band's legend entry where a renderer lists it
    group: str = ""  # lines shown and hidden together (a subject's line, band, control ...)
    hidden: bool = False  # drawn only on request (plotly: legend only; PNG: not drawn)


@dataclass(frozen=True)
class LineFigure:
    """Lines against a shared x axis, in legend order."""

    axes: Axes
    lines: tuple[Line, ...]


@dataclass(frozen=True)
class ColourScale:
    """A heatmap's colours: the colour map, its (low, high) ends (None: the data's) and what it
    measures (the colour bar's title)."""

    label: str
    low: float | None = None
    high: float | None = None
    colours: Literal["viridis"] = "viridis"


@dataclass(frozen=True)
class HeatmapFigure:
    """A grid of values (None: no value) with row and column labels, top row first."""

    axes: Axes
    rows: tuple[str, ...]
    columns: tuple[str | int, ...]
    values: tuple[tuple[Number | None, ...], ...]  # one tuple per row
    scale: ColourScale
    cell_format: str | None = "{:.2f}"  # the number written in each cell (None: no numbers)

    def turned(self) -> HeatmapFigure:
        """The same heatmap with rows and columns swapped (a very wide one fits a page so)."""
        values = tuple(zip(*self.values)) if self.values else ()
        axes = replace(self.axes, x=self.axes.y, y=self.axes.x)
        return replace(
            self,
            axes=axes,
            rows=tuple(str(c) for c in self.columns),
            columns=self.rows,
            values=values,
        )


def heatmap_model(
    frame: pl.DataFrame,
    *,
    rows: str,
    columns: str,
    value: str,
    axes: Axes,
    scale: ColourScale,
    row_order: Sequence[object] | None = None,
    column_order: Sequence[object] | None = None,
    row_names: Mapping[Any, str] | None = None,
    column_names: Mapping[Any, str] | None = None,
    cell_format: str | None = "{:.2f}",
) -> HeatmapFigure:
    """The heatmap of `value` over `rows` x `columns` of a table (the mean where several table
    rows share a cell; None where none does); keys sorted unless an order is given, shown
    through `row_names` / `column_names` (default: as they are; integer columns stay numbers)."""
    table = frame.group_by(rows, columns).agg(pl.col(value).mean())
    row_keys = list(row_order) if row_order is not None else sorted(table[rows].unique().to_list())
    col_keys = (
        list(column_order)
        if column_order is not None
        else sorted(table[columns].unique().to_list())
    )
    cell = {(r, c): v for r, c, v in table.select(rows, columns, value).iter_rows()}
    grid = tuple(tuple(_number(cell.get((r, c))) for c in col_keys) for r in row_keys)
    return HeatmapFigure(
        axes=axes,
        rows=tuple((row_names or {}).get(r, str(r)) for r in row_keys),
        columns=tuple(_column(c, column_names) for c in col_keys),
        values=grid,
        scale=scale,
        cell_format=cell_format,
    )


def _number(value: object) -> float | None:
    return None if value is None or value != value else float(value)  # type: ignore[arg-type]


def _column(key: object, names: Mapping[Any, str] | None) -> str | int:
    if names is not None and key in names:
        return names[key]
    return key if isinstance(key, int) and not isinstance(key, bool) else str(key)
