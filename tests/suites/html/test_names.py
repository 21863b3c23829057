"""The explorer treats names as data: two models that share a last path component stay two
rows, names cannot break the page or become script links, compared heatmaps share one colour
scale, and a damaged parquet file is refused in one line."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlparse

import plotly.graph_objects as go
import plotly.io as pio
import polars as pl
import pytest
from selectolax.lexbor import LexborHTMLParser

from suites.cli import main
from suites.html import write_html
from suites.html.folder import read_folder
from suites.html.page import script_json
from suites.html.scores import site_scores, task_scores
from suites.plot_style import short_names
from tests.suites.html.results_folder import write_results

DECODER = json.JSONDecoder()


def parsed(page: Path) -> LexborHTMLParser:
    return LexborHTMLParser(page.read_text(encoding="utf-8"))


def scores(tree: LexborHTMLParser) -> list[dict]:
    element = tree.css_first("script#lingprobe-scores")
    assert element is not None and element.attributes["type"] == "application/json"
    return json.loads(element.text())


def figures(tree: LexborHTMLParser) -> dict[str, dict]:
    """Every plotly figure of the page, by div id, from its `Plotly.newPlot` call."""
    found = {}
    for script in tree.css("script"):
        body = script.text()
        if "Plotly.newPlot(" not in body or "PLOTLYENV" not in body:
            continue
        call = body.split("Plotly.newPlot(", 1)[1]
        div, rest = call.split(",", 1)
        rest = rest.strip()
        data, end = DECODER.raw_decode(rest)
        layout, _ = DECODER.raw_decode(rest[end:].strip().removeprefix(",").strip())
        found[json.loads(div)] = {"data": data, "layout": layout}
    return found


def test_short_names_stay_unique():
    names = ["alice/bert", "bob/bert", "org/glove", "minilm", "x/minilm", "a/b@random"]
    shown = short_names(names)
    assert shown == {
        "alice/bert": "alice/bert",
        "bob/bert": "bob/bert",
        "org/glove": "glove",
        "minilm": "minilm",
        "x/minilm": "x/minilm",
        "a/b@random": "b@random",
    }
    assert len(set(shown.values())) == len(shown)


def test_models_sharing_a_last_component_are_two_rows(tmp_path):
    subjects = [("alice/bert", "pretrained"), ("bob/bert", "random"), ("org/glove", "pretrained")]
    folder = write_results(tmp_path / "run", subjects=subjects)
    rows = scores(parsed(write_html(folder)))
    by_subject: dict[str, set[str]] = {}
    for row in rows:
        by_subject.setdefault(row["subject"], set()).add(row["name"])
    assert by_subject == {
        "alice/bert": {"alice/bert"},
        "bob/bert@random": {"bob/bert@random"},
        "org/glove": {"glove"},
    }
    # never averaged: each row is that model's own score (pretrained 0.9, random 0.5, +0.05/layer)
    alice = [r["score"] for r in rows if r["subject"] == "alice/bert"]
    bob = [r["score"] for r in rows if r["subject"] == "bob/bert@random"]
    assert min(alice) > 0.95 and max(bob) < 0.65


def test_the_same_model_name_twice_is_not_merged_in_the_figures(tmp_path):
    subjects = [("alice/bert", "pretrained"), ("bob/bert", "pretrained")]
    folder = write_results(tmp_path / "run", subjects=subjects)
    shown = figures(parsed(write_html(folder)))
    curves = [t["name"] for t in shown["curves-0"]["data"] if "visible" not in t]
    assert sorted(curves) == ["alice/bert", "bob/bert"]
    assert sorted(shown["heatmap-types"]["data"][0]["y"]) == ["alice/bert", "bob/bert"]


def test_names_that_look_like_markup_do_not_break_the_page(tmp_path):
    evil = "x<!--<script>"
    closing = "y</script><p id='injected'>"
    subjects = [(evil, "pretrained"), (closing, "pretrained")]
    tasks = {"t&<b>": ("p</script>", "syntax")}
    folder = write_results(tmp_path / "run", subjects=subjects, tasks=tasks)
    page = write_html(folder)
    text = page.read_text(encoding="utf-8")
    payload = text.split("id='lingprobe-scores'>", 1)[1].split("</script>", 1)[0]
    assert "<" not in payload and ">" not in payload and "&" not in payload
    assert "\\u003c!--\\u003cscript\\u003e" in payload
    tree = parsed(page)
    assert tree.css_first("#injected") is None
    rows = scores(tree)
    assert {r["subject"] for r in rows} == {evil, closing}
    assert {r["task"] for r in rows} == {"t&<b>"}
    assert tree.css("script")[-1].text().startswith("// The leaderboard's filters")
    options = [o.attributes["value"] for o in tree.css("select[data-filter='task'] option")]
    assert options == ["", "t&<b>"]


def test_script_json_decodes_to_the_same_value():
    value = {"a</script>": ["<!--", "&amp;", "\u2028", "\x00"]}
    text = script_json(value)
    assert not {"<", ">", "&"} & set(text)
    assert json.loads(text) == value


def test_script_json_writes_non_finite_numbers_as_null():
    text = script_json({"a": [float("nan"), float("inf"), 1.5]})
    assert json.loads(text) == {"a": [None, None, 1.5]}


def test_a_nan_score_is_left_out_of_the_leaderboard_not_counted_as_zero(tmp_path):
    folder = write_results(tmp_path / "run")
    rows = pl.read_parquet(folder / "results.parquet")
    nan_task = (pl.col("model") == "glove") & (pl.col("task") == "upos")
    rows.with_columns(value=pl.when(nan_task).then(float("nan")).otherwise("value")).write_parquet(
        folder / "results.parquet"
    )
    page = write_html(folder)
    payload = page.read_text(encoding="utf-8").split("id='lingprobe-scores'>", 1)[1]

    def no_constants(token: str) -> None:
        raise AssertionError(f"{token} is not JSON; JSON.parse rejects it")

    shown = json.loads(payload.split("</script>", 1)[0], parse_constant=no_constants)
    assert {(r["subject"], r["task"]) for r in shown if r["subject"] == "glove"} == set()
    assert {r["subject"] for r in shown} == {"bert", "bert@random"}


def test_provenance_links_are_relative_and_quoted(tmp_path):
    name = "javascript:alert(1)%2F%2F.parquet"
    folder = write_results(tmp_path / "run", file=name)
    tree = parsed(write_html(folder))
    hrefs = [a.attributes["href"] for a in tree.css("a[href]")]
    assert "./javascript%3Aalert%281%29%252F%252F.parquet" in hrefs
    for href in hrefs:
        assert href.startswith("./") and urlparse(href).scheme == ""
    # a page written elsewhere links back up to the folder
    other = write_html(folder, tmp_path / "pages" / "report.html")
    hrefs = [a.attributes["href"] for a in parsed(other).css("a[href]")]
    assert "./../run/leaderboard.parquet" in hrefs


def test_compared_layer_heatmaps_share_one_colour_scale(tmp_path):
    folder = write_results(tmp_path / "run")
    shown = figures(parsed(write_html(folder)))
    heatmaps = [v["data"][0] for k, v in shown.items() if k.startswith("heatmap-layers-")]
    assert len(heatmaps) == 3
    sites = site_scores(read_folder(folder).rows)
    test = sites.filter(split="test").drop_nulls("layer")["score"]
    for trace in heatmaps:
        assert trace["zmin"] == pytest.approx(test.min())
        assert trace["zmax"] == pytest.approx(test.max())
    assert task_scores(sites).height == 5


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_report_html_on_a_damaged_parquet_is_one_line(tmp_path, capsys, damage):
    folder = write_results(tmp_path / "run")
    path = folder / "results.parquet"
    data = path.read_bytes()
    path.write_bytes(
        {"truncated": data[: len(data) // 2], "garbage": b"x" * 500, "empty": b""}[damage]
    )
    assert main(["report", str(folder), "--html"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "results.parquet cannot be read as parquet" in err[0]
    assert "damaged or truncated" in err[0]


def test_plotly_escapes_names_inside_its_figure_scripts():
    # the figures are plotly's own `<script>` elements: it must keep escaping `<` and `/`
    fig = go.Figure(go.Scatter(name="<!--<script></script>"))
    html = pio.to_html(fig, full_html=False, include_plotlyjs=False)
    assert html.count("<script") == 1 and html.count("</script>") == 1


def test_the_explorer_names_a_random_twin_with_the_one_label_function():
    """A sweep's rows already carry `NAME@random`; the explorer adds the suffix only where the
    model column lacks it, as `suites.schema.model_label` does for every table."""
    from suites.schema import model_label

    base = {"suite": "edge", "task": "t", "phenomenon": "", "phenomenon_type": ""}
    base |= {"site": "encoder.1", "layer": 1, "seed": 0, "variant": "task", "mask": 1.0}
    base |= {"split": "test", "metric": "accuracy", "value": 0.5, "unit": "u"}
    rows = pl.DataFrame(
        [
            {**base, "model": "bert", "init": "pretrained"},
            {**base, "model": "bert", "init": "random"},
            {**base, "model": "gpt@random", "init": "random"},
        ]
    )
    subjects = sorted(site_scores(rows)["subject"].to_list())
    assert subjects == ["bert", "bert@random", "gpt@random"]
    assert [model_label(m, i) for m, i in rows.select("model", "init").iter_rows()] == [
        "bert",
        "bert@random",
        "gpt@random",
    ]
