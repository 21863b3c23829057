"""One figure model, two renderers: the matplotlib PNG plots (`suites.plots`) and the explorer's
plotly figures (`suites.html.figures`) draw the same `suites.figure_model` descriptions, so the
points, bands, words and heatmap cells they show are the same."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from matplotlib.collections import PolyCollection

from suites.figure_model import Axes, ColourScale, Line, LineFigure, heatmap_model
from suites.html.figures import plotly_heatmap, plotly_lines
from suites.plot_style import texts
from suites.plots import draw_heatmap, draw_lines, layer_lines


def scores() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "model": ["bert", "bert", "bert", "bert", "gpt", "gpt"],
            "init": ["pretrained"] * 6,
            "layer": [0, 1, 0, 1, 0, 1],
            "value": [0.5, 0.7, 0.6, 0.9, 0.4, None],
            "sigma": [0.1, 0.0, 0.1, 0.0, 0.05, 0.05],
        }
    )


def test_both_renderers_draw_the_same_lines():
    frame = scores().group_by("model", "init", "layer").agg(pl.col("value", "sigma").mean())
    model = layer_lines(frame, line="model", error="sigma", title="probe <accuracy>")
    hidden = Line("bert: control", (0.0, 1.0), (0.2, 0.3), "#000000", dash="dot", hidden=True)
    model = LineFigure(model.axes, (*model.lines, hidden))
    png, web = draw_lines(model), plotly_lines(model)

    drawn = {line.get_label(): line for line in png.axes[0].get_lines()}
    traces = {t.name: t for t in web.data if t.fill is None}
    assert set(drawn) == {"bert", "gpt"}  # the hidden line is left out of the PNG ...
    assert set(traces) == {"bert", "gpt", "bert: control"}  # ... and listed in plotly
    assert traces["bert: control"].visible == "legendonly"
    for line in model.lines[:2]:
        assert list(drawn[line.name].get_xdata()) == list(traces[line.name].x) == list(line.x)
        ys = [np.nan if v is None else v for v in line.y]
        np.testing.assert_allclose(drawn[line.name].get_ydata(), ys)
        assert list(traces[line.name].y) == list(line.y)
        assert drawn[line.name].get_color() == traces[line.name].line.color == line.colour
    bert = next(line for line in model.lines if line.name == "bert")
    assert bert.y == pytest.approx((0.55, 0.8))  # mean of the two bert rows per layer, by hand
    assert bert.band == (pytest.approx((0.45, 0.8)), pytest.approx((0.65, 0.8)))
    bands = [t for t in web.data if t.fill == "toself"]
    assert (
        len(bands)
        == 2
        == len([c for c in png.axes[0].collections if isinstance(c, PolyCollection)])
    )
    assert list(bands[0].y) == pytest.approx([*bert.band[1], *bert.band[0][::-1]])
    assert texts(png)["title"] == [model.axes.title] == ["probe <accuracy>"]
    assert web.layout.title.text == "probe &lt;accuracy&gt;"  # plotly reads markup: escaped
    assert texts(png)["xlabel"] == [web.layout.xaxis.title.text] == ["layer"]


def test_both_renderers_draw_the_same_heatmap():
    frame = scores()
    model = heatmap_model(
        frame,
        rows="model",
        columns="layer",
        value="value",
        axes=Axes("score per model and layer", "layer", "model"),
        scale=ColourScale("score", 0.0, 1.0),
    )
    assert model.rows == ("bert", "gpt") and model.columns == (0, 1)
    assert model.values == (pytest.approx((0.55, 0.8)), (0.4, None))  # means by hand
    png, web = draw_heatmap(model), plotly_heatmap(model)
    image = png.axes[0].get_images()[0]
    np.testing.assert_allclose(image.get_array().filled(np.nan), [[0.55, 0.8], [0.4, np.nan]])
    (trace,) = web.data
    assert [list(row) for row in trace.z] == [list(row) for row in model.values]
    assert list(trace.x) == [0, 1] and list(trace.y) == ["bert", "gpt"]
    assert (trace.zmin, trace.zmax) == image.get_clim() == (0.0, 1.0)
    shown = [t.get_text() for t in png.axes[0].get_yticklabels()]
    assert shown == ["bert", "gpt"]
    cells = sorted(t.get_text() for t in png.axes[0].texts)
    assert cells == ["0.40", "0.55", "0.80"] and trace.texttemplate == "%{z:.2f}"
    turned = model.turned()
    assert turned.rows == ("0", "1") and turned.columns == ("bert", "gpt")
    assert turned.values == (model.values[0][:1] + model.values[1][:1], (0.8, None))
