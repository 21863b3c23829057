"""The explorer page: one HTML file with plotly's JavaScript inlined once, the data of every
figure and table inlined, and nothing fetched at view time (it opens offline, as an attachment).

Every name in it (models, tasks, files) comes from the results and is treated as data: text is
HTML-escaped, the inline JSON escapes `<`, `>` and `&`, and links to files are relative
(`./name`) and URL-quoted, so no name can end an element early or become a script link.
"""

from __future__ import annotations

import html
import json
import math
import os
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

import plotly.graph_objects as go
import plotly.io as pio
import polars as pl
from plotly.offline import get_plotlyjs

from lingprobe.atomic import atomic_write_bytes
from suites.html import figures
from suites.html.folder import ResultsFolder, read_folder
from suites.html.published import published_sections
from suites.html.scores import site_scores, task_scores
from suites.plot_style import short_names
from suites.schema import BASELINE_INIT

FILE = "report.html"
FILTERS = {"suite": "suite", "phenomenon_type": "phenomenon type", "phenomenon": "phenomenon"}
FILTERS |= {"task": "task"}
MAX_HEATMAPS = 8  # task x layer heatmaps: the first subjects, best first
STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.5em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
td,th{border:1px solid #ddd;padding:.25em .6em;text-align:left}
th[data-sort]{cursor:pointer;background:#f4f4f4}th.sorted{background:#dde8f3}
select{margin-right:1em}pre{background:#f7f7f7;padding:1em;overflow:auto;font-size:.8em}
.note{color:#666;font-size:.85em}tr.this-run{background:#fff3cd}
"""


def write_html(folder: str | Path, out: str | Path | None = None) -> Path:
    """Write the explorer of `folder` to `out` (default `folder/report.html`); returns its path."""
    root = Path(folder)
    target = Path(out) if out is not None else root / FILE
    page = render_page(read_folder(root), target.parent)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, page.encode("utf-8"))
    return target


def render_page(data: ResultsFolder, here: Path) -> str:
    """The whole page; links to the parquet files are relative to `here`."""
    sites = site_scores(data.rows)
    # baselines (right-branching trees ...) are drawn in the curves, not ranked as models
    tasks = task_scores(sites.filter(pl.col("init") != BASELINE_INIT))
    names = short_names(sites["subject"].unique(maintain_order=True).to_list())
    parts = [
        f"<h1>lingprobe results: {html.escape(str(data.manifest.get('suite', data.root.name)))}"
        "</h1>",
        _leaderboard(tasks),
        *published_sections(data.files),
        "<h2>Layer curves</h2><p class='note'>Test score per layer; click a legend entry to"
        " show the control task or the selectivity (task − control).</p>",
    ]
    for i, task in enumerate(sorted(sites.filter(pl.col("layer").is_not_null())["task"].unique())):
        curves = figures.layer_curves(sites, task, names, data.intervals)
        parts.append(_figure(curves, f"curves-{i}"))
    parts.append("<h2>Heatmaps</h2>")
    if tasks["phenomenon_type"].fill_null("").str.len_chars().max():
        parts.append(_figure(figures.type_heatmap(tasks, names), "heatmap-types"))
    ranked = tasks.group_by("subject").agg(pl.col("score").mean()).sort("score", descending=True)
    layered = sites.filter(pl.col("layer").is_not_null())["subject"].unique().to_list()
    shown = [s for s in ranked["subject"].to_list() if s in layered][:MAX_HEATMAPS]
    scale = figures.score_range(sites, shown)
    for i, subject in enumerate(shown):
        heatmap = figures.layer_heatmap(sites, subject, names, scale)
        parts.append(_figure(heatmap, f"heatmap-layers-{i}"))
    parts.extend(_edge_tables(data.tables))
    if "flash" in data.tables:
        parts.append("<h2>FlashHolmes</h2>")
        parts.append(_figure(figures.flash_curve(data.tables["flash"]), "flash"))
    parts.append(_provenance(data, here))
    # a task whose score is NaN (no test item, a failed fit) is no contest: left out of the
    # leaderboard's means and winning rates rather than counted as 0
    scores = tasks.filter(pl.col("score").is_finite()).with_columns(
        name=pl.col("subject").replace_strict(names, return_dtype=pl.String)
    )
    payload = script_json(scores.to_dicts())
    script = resources.files("suites.html").joinpath("explorer.js").read_text(encoding="utf-8")
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<title>lingprobe results</title>"
        f"<style>{STYLE}</style><script>{get_plotlyjs()}</script></head><body>"
        + "\n".join(parts)
        + f"<script type='application/json' id='lingprobe-scores'>{payload}</script>"
        + f"<script>{script}</script></body></html>"
    )


def script_json(value: Any) -> str:
    """`value` as JSON that is safe inside a `<script>` element: `<`, `>` and `&` written as
    `\\u003c`, `\\u003e`, `\\u0026` (JSON has them only inside strings, where the escapes decode
    to the same text), so no `</script>` or `<!--` can end or hide the element."""
    text = json.dumps(_finite(value), default=str, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _finite(value: Any) -> Any:
    """`value` with NaN and infinite floats as None: JSON has no NaN (`JSON.parse` rejects it)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def file_link(path: Path, here: Path) -> str:
    """A relative, URL-quoted link from the page's folder `here` to `path` (`./name`): a file
    name never becomes a scheme (`javascript:`) or a host."""
    relative = Path(os.path.relpath(path, here)).as_posix()
    return "./" + quote(relative, safe="/")


def _figure(fig: go.Figure, div_id: str) -> str:
    config = {"displaylogo": False, "responsive": True}
    return pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id=div_id, config=config)


def _leaderboard(tasks: pl.DataFrame) -> str:
    selects = []
    for column, words in FILTERS.items():
        values = sorted({str(v) for v in tasks[column].drop_nulls().to_list() if str(v)})
        options = "".join(
            f"<option value='{html.escape(v)}'>{html.escape(v)}</option>" for v in values
        )
        selects.append(
            f"<label>{words} <select data-filter='{column}'><option value=''>all</option>"
            f"{options}</select></label>"
        )
    head = "".join(
        f"<th data-sort='{key}'>{words}</th>"
        for key, words in (
            ("rank", "rank"),
            ("subject", "model"),
            ("mwr", "mean winning rate"),
            ("mean", "mean score"),
            ("tasks", "tasks"),
        )
    ).replace("<th data-sort='rank'>", "<th>")
    return (
        "<h2>Leaderboard</h2><p class='note'>One test score per model and task (the headline"
        " metric at the layer the dev score picks); mean winning rate: per task, the share of the"
        " other models a model beats (ties half), averaged over the kept tasks. Click a column to"
        " sort.</p>"
        + "".join(selects)
        + f"<table id='leaderboard'><thead><tr>{head}</tr></thead><tbody></tbody></table>"
    )


def _edge_tables(tables: dict[str, pl.DataFrame]) -> list[str]:
    titles = {
        "heuristics": "Heuristic accuracy (%) on the test set (paper Table 2)",
        "drops": "Drops on the filtered test sets (paper Tables 3-4)",
        "pretrained_vs_random": "Pretrained vs random on Mem-Exact-filtered test (Tables 5-6)",
        "pretrained_vs_random_tests": "Pretrained − random with 95% intervals and paired tests",
    }
    found = [name for name in titles if name in tables]
    if not found:
        return []
    parts = ["<h2>Edge probing tables</h2>"]
    for name in found:
        parts.append(f"<h3>{titles[name]}</h3>{_table(tables[name])}")
    return parts


def _table(frame: pl.DataFrame, limit: int = 200) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    body = []
    for row in frame.head(limit).iter_rows():
        cells = "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row)
        body.append(f"<tr>{cells}</tr>")
    more = (
        f"<p class='note'>first {limit} of {frame.height} rows</p>" if frame.height > limit else ""
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}"


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def _provenance(data: ResultsFolder, here: Path) -> str:
    links = "".join(
        f"<li><a href='{html.escape(file_link(p, here))}'>"
        f"{html.escape(str(p.relative_to(data.root)))}</a></li>"
        for p in data.files
    )
    manifest = html.escape(json.dumps(data.manifest, indent=2, default=str))
    return (
        "<h2>Provenance</h2><p class='note'>The run's manifest (models, data with hashes,"
        " settings, versions) and its parquet files; this page is rebuilt from them by"
        " <code>lingprobe report DIR --html</code>.</p>"
        f"<ul>{links}</ul><pre id='manifest'>{manifest}</pre>"
    )
