"""The explorer's plotly figures: layer curves per task, heatmaps, the FlashHolmes curve, each
built as a `suites.figure_model` description (the one the PNG plots draw with matplotlib) and
drawn by `plotly_lines` / `plotly_heatmap`. The colours are the PNG plots'
(`suites.plot_style`): a model keeps its colour, its twin a lighter shade of it.

Subjects are identified by their full names; `names` maps each to the label shown
(`suites.plot_style.short_names`). Shown text goes through `text`, since plotly reads a few HTML
tags and entities in labels: a name is drawn as written, never as markup.
"""

from __future__ import annotations

import html

import plotly.graph_objects as go
import polars as pl

from suites.figure_model import (
    Axes,
    ColourScale,
    HeatmapFigure,
    Line,
    LineFigure,
    heatmap_model,
)
from suites.plot_style import PALETTE, model_colour
from suites.plot_style import label as words
from suites.schema import BASELINE_INIT

FLASH_COLOUR = str(PALETTE[0])
LAYOUT = {"template": "plotly_white", "height": 380, "margin": {"l": 60, "r": 20, "t": 50, "b": 50}}


def text(value: object) -> str:
    """`value` as plotly text that is drawn as written (`<`, `>`, `&` as entities)."""
    return html.escape(str(value), quote=False)


def layer_curves(
    sites: pl.DataFrame,
    task: str,
    names: dict[str, str],
    intervals: pl.DataFrame | None = None,
) -> go.Figure:
    """Test score against layer for every subject of `task` (`task_lines`), drawn by plotly."""
    return plotly_lines(task_lines(sites, task, names, intervals))


def task_lines(
    sites: pl.DataFrame,
    task: str,
    names: dict[str, str],
    intervals: pl.DataFrame | None = None,
) -> LineFigure:
    """Test score against layer for every subject of `task`: the task probes' line (with its
    bootstrap band where `intervals` has one), and the control and selectivity lines (hidden
    until asked for), and each baseline's score as a flat line."""
    test = sites.filter((pl.col("task") == task) & (pl.col("split") == "test"))
    rows = test.filter(pl.col("layer").is_not_null()).sort("layer")
    baselines = test.filter(pl.col("layer").is_null() & (pl.col("init") == BASELINE_INIT))
    metric = rows["metric"][0] if rows.height else ""
    lines: list[Line] = []
    for (subject, model, init), part in rows.group_by(
        "subject", "model", "init", maintain_order=True
    ):
        colour = model_colour(model, init)
        name = names.get(str(subject), str(subject))
        xs = tuple(part["layer"].to_list())
        band = _band(part, intervals, task)
        lines.append(
            Line(
                name,
                xs,
                tuple(part["score"].to_list()),
                colour,
                band=band,
                band_name=f"{name}: 95% interval",
                group=str(subject),
            )
        )
        for column, dash in (("control", "dot"), ("selectivity", "dash")):
            if part[column].null_count() < part.height:
                lines.append(
                    Line(
                        f"{name}: {column}",
                        xs,
                        tuple(part[column].to_list()),
                        colour,
                        dash=dash,  # type: ignore[arg-type]
                        markers=False,
                        group=str(subject),
                        hidden=True,
                    )
                )
    if rows.height:
        span = (rows["layer"].min(), rows["layer"].max())
        for model, score in baselines.select("model", "score").iter_rows():
            lines.append(
                Line(
                    f"{model} (baseline)",
                    span,  # type: ignore[arg-type]
                    (score, score),
                    "#555555",
                    dash="dashdot",
                    markers=False,
                )
            )
    axes = Axes(f"{task}: test {words(metric)} per layer", "layer", words(metric))
    return LineFigure(axes, tuple(lines))


def plotly_lines(model: LineFigure) -> go.Figure:
    """A `LineFigure` drawn with plotly: bands as filled areas, hidden lines listed in the
    legend (shown on a click), every text escaped (`text`)."""
    fig = go.Figure()
    for line in model.lines:
        group = {"legendgroup": line.group} if line.group else {}
        shown = {"visible": "legendonly"} if line.hidden else {}
        if line.band is not None:
            low, high = list(line.band[0]), list(line.band[1])
            xs = list(line.x)
            fig.add_trace(
                go.Scatter(
                    x=xs + xs[::-1],
                    y=high + low[::-1],
                    fill="toself",
                    mode="lines",
                    fillcolor=line.colour,
                    opacity=0.2,
                    line={"width": 0},
                    name=text(line.band_name or f"{line.name}: band"),
                    hoverinfo="skip",
                    **group,
                )
            )
        fig.add_trace(
            go.Scatter(
                x=list(line.x),
                y=list(line.y),
                mode="lines+markers" if line.markers else "lines",
                name=text(line.name),
                line={"color": line.colour, "dash": line.dash},
                **shown,
                **group,
            )
        )
    xaxis = {"title": text(model.axes.x)} | ({"type": "log"} if model.axes.x_log else {})
    fig.update_layout(
        title=text(model.axes.title), xaxis=xaxis, yaxis_title=text(model.axes.y), **LAYOUT
    )
    return fig


def plotly_heatmap(model: HeatmapFigure) -> go.Figure:
    """A `HeatmapFigure` drawn with plotly (its height grows with the rows)."""
    scale = model.scale
    fig = go.Figure(
        go.Heatmap(
            z=[list(row) for row in model.values],
            x=[text(c) if isinstance(c, str) else c for c in model.columns],
            y=[text(r) for r in model.rows],
            zmin=scale.low,
            zmax=scale.high,
            colorscale=scale.colours.capitalize(),
            colorbar={"title": text(scale.label)},
            texttemplate=_template(model.cell_format),
        )
    )
    fig.update_layout(
        title=text(model.axes.title),
        xaxis_title=text(model.axes.x),
        **({"yaxis_title": text(model.axes.y)} if model.axes.y else {}),
        **{**LAYOUT, "height": 160 + 28 * len(model.rows)},
    )
    return fig


def _template(cell_format: str | None) -> str | None:
    """A Python cell format (`{:.2f}`) as plotly's text template (`%{z:.2f}`)."""
    if cell_format is None:
        return None
    return cell_format.replace("{:", "%{z:")


def _band(
    part: pl.DataFrame, intervals: pl.DataFrame | None, task: str
) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    if intervals is None or "test_set" not in intervals.columns:
        return None
    model, init = part["model"][0], part["init"][0]
    bounds = intervals.filter(
        (pl.col("task") == task)
        & (pl.col("model") == model)
        & (pl.col("init") == init)
        & (pl.col("variant") == "task")
        & (pl.col("test_set") == "original")
        & pl.col("ci_low").is_not_null()
    )
    joined = part.select("layer").join(bounds.select("layer", "ci_low", "ci_high"), on="layer")
    if joined.height != part.height:
        return None
    return tuple((joined["ci_low"] / 100).to_list()), tuple((joined["ci_high"] / 100).to_list())


def type_heatmap(tasks: pl.DataFrame, names: dict[str, str]) -> go.Figure:
    """Mean task score per subject (rows, best first) and phenomenon type (columns)."""
    typed = tasks.with_columns(
        pl.col("phenomenon_type").fill_null("").replace("", "untyped").alias("type")
    )
    mean = typed.group_by("subject", "type").agg(pl.col("score").mean())
    order = mean.group_by("subject").agg(pl.col("score").mean()).sort("score")["subject"]
    model = heatmap_model(
        mean,
        rows="subject",
        columns="type",
        value="score",
        axes=Axes("Mean score per phenomenon type (models by mean score)", "phenomenon type"),
        scale=ColourScale("mean score"),
        row_order=order.to_list(),
        row_names=names,
    )
    return plotly_heatmap(model)


def score_range(sites: pl.DataFrame, subjects: list[str]) -> tuple[float, float]:
    """(lowest, highest) test score at a layer of `subjects`: the one colour scale of the
    heatmaps that are read side by side."""
    rows = (
        sites.filter(
            pl.col("subject").is_in(subjects)
            & (pl.col("split") == "test")
            & pl.col("layer").is_not_null()
        )["score"]
        .drop_nans()
        .drop_nulls()
    )
    if rows.is_empty():
        return 0.0, 1.0
    return float(rows.min()), float(rows.max())  # type: ignore[arg-type]


def layer_heatmap(
    sites: pl.DataFrame, subject: str, names: dict[str, str], scale: tuple[float, float]
) -> go.Figure:
    """Test score of one subject per task (rows) and layer (columns), on the colour `scale`
    (zmin, zmax) shared by every subject's heatmap."""
    rows = sites.filter(
        (pl.col("subject") == subject) & (pl.col("split") == "test") & pl.col("layer").is_not_null()
    )
    title = (
        f"{names.get(subject, subject)}: test score per task and layer"
        " (one colour scale for every model)"
    )
    model = heatmap_model(
        rows,
        rows="task",
        columns="layer",
        value="score",
        axes=Axes(title, "layer"),
        scale=ColourScale("test score", scale[0], scale[1]),
        cell_format=None,
    )
    return plotly_heatmap(model)


def flash_curve(flash: pl.DataFrame) -> go.Figure:
    """FlashHolmes: rank resolution (with its interval) against the train fraction."""
    rows = flash.sort("fraction")
    band = None
    if "ci_low" in rows.columns and rows["ci_low"].is_not_nan().any():
        band = (tuple(rows["ci_low"].to_list()), tuple(rows["ci_high"].to_list()))
    line = Line(
        "rank resolution",
        tuple(rows["fraction"].to_list()),
        tuple(rows["rank_resolution"].to_list()),
        FLASH_COLOUR,
        band=band,
        band_name="95% interval",
    )
    axes = Axes(
        "FlashHolmes: reliability (rank resolution) vs efficiency (train fraction)",
        "train fraction",
        "rank resolution",
        x_log=True,
    )
    return plotly_lines(LineFigure(axes, (line,)))
