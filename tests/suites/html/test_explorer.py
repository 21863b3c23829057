"""The HTML explorer: its numbers from the parquet files, and the page in a real headless
Chromium (no console errors, no network, filters, sortable leaderboard, plotly traces, pixels)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import polars as pl
import pytest
from plotly.offline import get_plotlyjs

from suites.cli import main
from suites.html import write_html
from suites.html.folder import read_folder
from suites.html.scores import site_scores, task_scores
from tests.suites.html.results_folder import SUBJECTS, write_results

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_results(tmp_path_factory.mktemp("sweep"))


def test_task_scores_take_the_layer_dev_picks(folder):
    data = read_folder(folder)
    sites = site_scores(data.rows)
    tasks = task_scores(sites)
    assert tasks.height == 5  # bert and its twin: 2 tasks; glove: upos only
    row = tasks.filter(subject="bert", task="upos").row(0, named=True)
    by_hand = (
        data.rows.filter(model="bert", init="pretrained", task="upos", variant="task", split="test")
        .filter(layer=2)["value"]
        .mean()
    )
    assert row["layer"] == 2 and row["score"] == pytest.approx(by_hand)
    control = sites.filter(subject="bert@random", task="upos", split="test", layer=0)
    assert control["selectivity"][0] == pytest.approx(control["score"][0] - control["control"][0])


def test_the_dev_pick_follows_the_metrics_direction():
    """A lower-better metric (mse in `probes.metric_table`) picks the layer of the lowest dev
    score; a higher-better one the highest."""
    rows = []
    for metric, dev in (("mse", [0.9, 0.2, 0.5]), ("pearson", [0.1, 0.3, 0.8])):
        for layer, score in enumerate(dev):
            for split, value in (("dev", score), ("test", 10.0 * layer)):
                rows.append(
                    {"model": "m", "init": "pretrained", "suite": "s", "task": metric,
                     "phenomenon": "", "phenomenon_type": "", "subject": "m",
                     "site": f"l{layer}", "layer": layer, "split": split, "metric": metric,
                     "score": value}
                )  # fmt: skip
    picked = task_scores(pl.DataFrame(rows)).sort("task")
    assert picked.select("task", "layer").rows() == [("mse", 1), ("pearson", 2)]


def test_cli_writes_one_self_contained_file(folder, tmp_path, capsys):
    target = tmp_path / "explorer.html"
    assert main(["report", str(folder), "--html", "--out", str(target)]) == 0
    assert str(target) in capsys.readouterr().out
    page = target.read_text(encoding="utf-8")
    assert page.count(get_plotlyjs()[:300]) == 1  # the library inlined once
    assert "<script src" not in page and "<link" not in page  # nothing to fetch
    assert page.count("Plotly.newPlot") >= 4  # curves of two tasks, heatmaps
    assert "results.parquet" in page and "leaderboard.parquet" in page
    assert main(["report", str(folder), "--out", str(target)]) == 2  # --out without --html
    assert "--html" in capsys.readouterr().err


def test_the_page_in_headless_chromium(folder, tmp_path):
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed here: apt-get install chromium")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    page_file = write_html(folder, tmp_path / "report.html")
    errors: list[str] = []
    requests: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(page_file.as_uri())
        page.wait_for_function("document.getElementById('curves-0').data !== undefined")
        rows = page.locator("#leaderboard tbody tr")
        assert rows.count() == len(SUBJECTS)
        before = page.locator("#leaderboard tbody").inner_text()
        assert before.splitlines()[0].split("\t")[1] == "bert"  # best first
        page.select_option("select[data-filter='phenomenon_type']", "semantics")
        assert rows.count() == 2  # glove ran no semantics task
        assert page.locator("#leaderboard tbody").inner_text() != before
        page.select_option("select[data-filter='phenomenon_type']", "")
        page.click("#leaderboard th[data-sort='subject']")
        names = [
            r.split("\t")[1] for r in page.locator("#leaderboard tbody").inner_text().splitlines()
        ]
        assert names == sorted(names)
        traces = page.evaluate("document.getElementById('curves-0').data.length")
        # curves-0 is `negation` (tasks sorted), which glove did not run: two subjects, each
        # with its task line, control and selectivity (the last two hidden until clicked)
        assert traces == 2 * 3
        hidden = page.evaluate(
            "document.getElementById('curves-0').data.filter(t => t.visible === 'legendonly')"
            ".length"
        )
        assert hidden == 2 * 2
        shot = page.screenshot(full_page=True)
        browser.close()
    assert errors == []
    assert requests == [page_file.as_uri()]
    image = _image(shot)
    assert image.size[0] >= 1000 and len(set(image.getdata())) > 50  # not a blank page


def _image(png: bytes):
    from PIL import Image

    return Image.open(io.BytesIO(png)).convert("RGB")


def test_manifest_is_shown(folder, tmp_path):
    page = write_html(folder, tmp_path / "r.html").read_text(encoding="utf-8")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert json.dumps(manifest["models"][0]["label"]) in page
    assert pl.read_parquet(folder / "results.parquet").height > 0
