"""The HTML explorer and the PNG plots: names that clash or look like markup, file names that
look like links, heatmaps read side by side, a damaged parquet file, and legend order."""

from __future__ import annotations

import json
import re

import polars as pl
from selectolax.lexbor import LexborHTMLParser

from suites.html import write_html
from suites.plot_style import texts
from suites.plots import layer_curves_figure
from tests.bad_inputs.case import Case, Env
from tests.bad_inputs.suite_cases import CommandFailed, cli
from tests.suites.html.results_folder import write_results


def page_of(env: Env, **options: object) -> LexborHTMLParser:
    folder = write_results(env.tmp() / "run", **options)  # type: ignore[arg-type]
    return LexborHTMLParser(write_html(folder).read_text(encoding="utf-8"))


def scores_of(tree: LexborHTMLParser) -> list[dict]:
    return json.loads(tree.css_first("script#lingprobe-scores").text())


def same_short_name(env: Env) -> None:
    rows = scores_of(page_of(env, subjects=[("alice/bert", "pretrained"), ("bob/bert", "random")]))
    names = {r["subject"]: r["name"] for r in rows}
    assert names == {"alice/bert": "alice/bert", "bob/bert@random": "bob/bert@random"}
    alice = [r["score"] for r in rows if r["subject"] == "alice/bert"]
    assert min(alice) > 0.95  # its own scores (0.9 + 0.05/layer), not averaged with bob's 0.5


def markup_names(env: Env) -> None:
    subjects = [("x<!--<script>", "pretrained"), ("y</script><b id='in'>", "pretrained")]
    tree = page_of(env, subjects=subjects)
    assert {r["subject"] for r in scores_of(tree)} == {s for s, _ in subjects}
    assert tree.css_first("#in") is None
    assert tree.css("script")[-1].text().startswith("// The leaderboard's filters")


def script_link_name(env: Env) -> None:
    tree = page_of(env, file="javascript:alert(1)%2F%2F.parquet")
    hrefs = [a.attributes["href"] or "" for a in tree.css("a[href]")]
    assert "./javascript%3Aalert%281%29%252F%252F.parquet" in hrefs
    assert all(h.startswith("./") for h in hrefs)


def heatmap_scales(env: Env) -> None:
    page = page_of(env).html or ""
    lows, highs = re.findall(r'"zmin":([-0-9.e]+)', page), re.findall(r'"zmax":([-0-9.e]+)', page)
    assert len(lows) == len(highs) == 3  # bert, its random twin, glove
    assert len(set(lows)) == len(set(highs)) == 1  # one scale, so brightness compares
    assert float(lows[0]) < 0.6 < 0.9 < float(highs[0])  # spans the twin's and the model's


def truncated_parquet(env: Env) -> None:
    folder = write_results(env.tmp() / "run")
    path = folder / "results.parquet"
    path.write_bytes(path.read_bytes()[:300])
    cli("report", str(folder), "--html")(env)


def foreign_ranking_file(env: Env) -> None:
    folder = write_results(env.tmp() / "run")
    frame = pl.DataFrame({"model": ["x"], "rank": [1.0], "this_run": [True]})
    frame.write_parquet(folder / "against_published.parquet")
    cli("report", str(folder), "--html")(env)


def legend_order(env: Env) -> None:
    rows = [
        {"init": init, "test_set": test_set, "layer": layer, "value": 0.5}
        for init in ("random", "pretrained")
        for test_set in ("mem_exact", "original")
        for layer in (0, 1)
    ]
    frame = pl.DataFrame(rows).sample(fraction=1.0, shuffle=True, seed=3)
    legend = texts(layer_curves_figure(frame, line=["init", "test_set"]))["legend"]
    expected = ["pretrained / original", "pretrained / Mem-Exact", "random / original"]
    assert legend == [*expected, "random / Mem-Exact"], legend


EXPLORER = [
    Case(
        "explorer-same-short-name",
        "two models `alice/bert` and `bob/bert` in one results folder",
        "two leaderboard rows, each its own scores; labels shortened only where unique",
        same_short_name,
        None,
        "",
    ),
    Case(
        "explorer-markup-names",
        "model names `x<!--<script>` and `y</script><b id='in'>`",
        "the page parses intact: the data element's JSON holds the names (`<` as \\u003c)",
        markup_names,
        None,
        "",
    ),
    Case(
        "explorer-script-link-name",
        "a results file named `javascript:alert(1)%2F%2F.parquet`",
        "a relative, URL-quoted link `./javascript%3Aalert...`, never a script link",
        script_link_name,
        None,
        "",
    ),
    Case(
        "explorer-heatmap-scales",
        "task x layer heatmaps of a pretrained model and its random twin",
        "one colour scale (zmin, zmax) for every heatmap, so brightness compares",
        heatmap_scales,
        None,
        "",
    ),
    Case(
        "report-html-truncated-parquet",
        "`lingprobe report --html` on a folder whose results.parquet is truncated",
        "exit 2, one line naming the file: damaged or truncated, rerun",
        truncated_parquet,
        CommandFailed,
        r"results\.parquet cannot be read as parquet .*damaged or truncated",
    ),
    Case(
        "report-html-foreign-ranking",
        "an `against_published.parquet` in a results folder that lingprobe did not write",
        "exit 2, one line naming the file and `--against-published`: rerun, or move it out",
        foreign_ranking_file,
        CommandFailed,
        r"against_published\.parquet is not a ranking written by lingprobe run holmes",
    ),
    Case(
        "plot-legend-order",
        "layer-curve lines of pretrained/random x original/Mem-Exact given in any order",
        "legend in reading order: pretrained/original, pretrained/Mem-Exact, random/...",
        legend_order,
        None,
        "",
    ),
]
