"""The explorer's plotly figures: layer curves per task, heatmaps, the FlashHolmes curve. The
colours are the PNG plots' (`suites.plot_style`): a model keeps its colour, its twin a lighter
shade of it.

Subjects are identified by their full names; `names` maps each to the label shown
(`suites.plot_style.short_names`). Shown text goes through `text`, since plotly reads a few HTML
tags and entities in labels: a name is drawn as written, never as markup.
"""

from __future__ import annotations

import html

import plotly.graph_objects as go
import polars as pl

from suites.plot_style import label as words
from suites.plot_style import model_colour
from suites.schema import BASELINE_INIT

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
    """Test score against layer for every subject of `task`: the task probes' line (with its
    bootstrap band where `intervals` has one), and the control and selectivity lines (hidden
    until clicked in the legend)."""
    test = sites.filter((pl.col("task") == task) & (pl.col("split") == "test"))
    rows = test.filter(pl.col("layer").is_not_null()).sort("layer")
    baselines = test.filter(pl.col("layer").is_null() & (pl.col("init") == BASELINE_INIT))
    metric = rows["metric"][0] if rows.height else ""
    fig = go.Figure()
    for (subject, model, init), part in rows.group_by(
        "subject", "model", "init", maintain_order=True
    ):
        colour = model_colour(model, init)
        name = text(names.get(str(subject), str(subject)))
        xs = part["layer"].to_list()
        band = _band(part, intervals, task)
        if band is not None:
            low, high = band
            fig.add_trace(
                go.Scatter(
                    x=xs + xs[::-1],
                    y=high + low[::-1],
                    fill="toself",
                    mode="lines",
                    fillcolor=colour,
                    opacity=0.2,
                    line={"width": 0},
                    name=f"{name}: 95% interval",
                    legendgroup=str(subject),
                    hoverinfo="skip",
                )
            )
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=part["score"].to_list(),
                mode="lines+markers",
                name=name,
                line={"color": colour},
                legendgroup=str(subject),
            )
        )
        for column, dash in (("control", "dot"), ("selectivity", "dash")):
            if part[column].null_count() < part.height:
                fig.add_trace(
                    go.Scatter(
                        x=xs,
                        y=part[column].to_list(),
                        mode="lines",
                        name=f"{name}: {column}",
                        line={"color": colour, "dash": dash},
                        visible="legendonly",
                        legendgroup=str(subject),
                    )
                )
    if rows.height:
        span = [rows["layer"].min(), rows["layer"].max()]
        for model, score in baselines.select("model", "score").iter_rows():
            fig.add_trace(
                go.Scatter(
                    x=span,
                    y=[score, score],
                    mode="lines",
                    name=f"{text(model)} (baseline)",
                    line={"color": "#555555", "dash": "dashdot"},
                )
            )
    fig.update_layout(
        title=f"{text(task)}: test {words(metric)} per layer",
        xaxis_title="layer",
        yaxis_title=words(metric),
        **LAYOUT,
    )
    return fig


def _band(
    part: pl.DataFrame, intervals: pl.DataFrame | None, task: str
) -> tuple[list[float], list[float]] | None:
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
    return (joined["ci_low"] / 100).to_list(), (joined["ci_high"] / 100).to_list()


def type_heatmap(tasks: pl.DataFrame, names: dict[str, str]) -> go.Figure:
    """Mean task score per subject (rows, best first) and phenomenon type (columns)."""
    typed = tasks.with_columns(
        pl.col("phenomenon_type").fill_null("").replace("", "untyped").alias("type")
    )
    mean = typed.group_by("subject", "type").agg(pl.col("score").mean())
    order = mean.group_by("subject").agg(pl.col("score").mean()).sort("score")["subject"]
    types = sorted(mean["type"].unique().to_list())
    grid = {(s, t): v for s, t, v in mean.select("subject", "type", "score").iter_rows()}
    z = [[grid.get((s, t)) for t in types] for s in order]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[text(t) for t in types],
            y=[text(names.get(s, s)) for s in order],
            colorscale="Viridis",
            colorbar={"title": "mean score"},
            texttemplate="%{z:.2f}",
        )
    )
    fig.update_layout(
        title="Mean score per phenomenon type (models by mean score)",
        xaxis_title="phenomenon type",
        **{**LAYOUT, "height": 160 + 28 * len(order)},
    )
    return fig


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
    tasks = sorted(rows["task"].unique().to_list())
    layers = sorted(rows["layer"].unique().to_list())
    grid = {(t, k): v for t, k, v in rows.select("task", "layer", "score").iter_rows()}
    fig = go.Figure(
        go.Heatmap(
            z=[[grid.get((t, k)) for k in layers] for t in tasks],
            x=layers,
            y=[text(t) for t in tasks],
            zmin=scale[0],
            zmax=scale[1],
            colorscale="Viridis",
            colorbar={"title": "test score"},
        )
    )
    fig.update_layout(
        title=f"{text(names.get(subject, subject))}: test score per task and layer"
        " (one colour scale for every model)",
        xaxis_title="layer",
        **{**LAYOUT, "height": 160 + 28 * len(tasks)},
    )
    return fig


def flash_curve(flash: pl.DataFrame) -> go.Figure:
    """FlashHolmes: rank resolution (with its interval) against the train fraction."""
    rows = flash.sort("fraction")
    xs = rows["fraction"].to_list()
    fig = go.Figure()
    if "ci_low" in rows.columns and rows["ci_low"].is_not_nan().any():
        fig.add_trace(
            go.Scatter(
                x=xs + xs[::-1],
                y=rows["ci_high"].to_list() + rows["ci_low"].to_list()[::-1],
                fill="toself",
                opacity=0.2,
                line={"width": 0},
                name="95% interval",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=xs, y=rows["rank_resolution"].to_list(), mode="lines+markers", name="rank resolution"
        )
    )
    fig.update_layout(
        title="FlashHolmes: reliability (rank resolution) vs efficiency (train fraction)",
        xaxis={"type": "log", "title": "train fraction"},
        yaxis_title="rank resolution",
        **LAYOUT,
    )
    return fig
