"""Fuzzing the explorer's names: whatever the model, task and file names (any unicode, `<!--`,
`</script>`, quotes, control characters, very long), the page parses with an HTML5 parser into
the expected elements: every figure, the data element with JSON that decodes to the names
given, the explorer script after it, and relative links to every parquet file."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlparse

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from suites.html import write_html
from suites.html.folder import TABLES
from tests.suites.html.results_folder import write_results

TRICKY = ["<!--", "<script>", "</script>", "-->", "<!--<script>", "'", '"', "&amp;", "\\", "/"]
TRICKY += ["\x00", "\r\n", "\t", "\u2028", "\ufeff", "javascript:", "%2F", "&#x3c;"]
pieces = st.one_of(st.sampled_from(TRICKY), st.text(min_size=1, max_size=12))
name = st.lists(pieces, min_size=1, max_size=6).map("".join)
long_name = st.integers(300, 3000).map(lambda n: "</script>" + "ö" * n)
# (a pretrained model named `x@random` is the random twin of `x` by the explorer's convention)
models = st.lists(
    st.one_of(name, long_name).filter(lambda m: not m.endswith("@random")),
    min_size=1,
    max_size=3,
    unique=True,
)
tasks = st.lists(name, min_size=1, max_size=2, unique=True)
# a file name: no `/` or NUL, under the file system's 255 bytes, not a table the explorer reads
file_text = st.text(
    st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), max_size=40
)
FILE_TRICKY = [t for t in TRICKY if "/" not in t and "\x00" not in t]
FILE_TRICKY += ["javascript:alert(1)%2F%2F", "<script>alert(1)<", "?x=1#y"]
file_names = st.lists(
    st.one_of(st.sampled_from(FILE_TRICKY), file_text), min_size=1, max_size=4
).map("".join)
# each example writes a results folder and a 5 MB page: bounded so the suite stays fast
FUZZ = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_page(page: Path, subjects: set[str], task_names: set[str], files: set[str]) -> None:
    tree = LexborHTMLParser(page.read_text(encoding="utf-8"))
    element = tree.css_first("script#lingprobe-scores")
    assert element is not None and element.attributes["type"] == "application/json"
    rows = json.loads(element.text())
    assert {r["subject"] for r in rows} == subjects
    assert {r["task"] for r in rows} == task_names
    labels = {r["subject"]: r["name"] for r in rows}
    assert len(set(labels.values())) == len(labels)  # no two models share a label
    scripts = tree.css("script")
    assert scripts[-1].text().startswith("// The leaderboard's filters")
    assert scripts[-2].attributes.get("id") == "lingprobe-scores"
    for i in range(len(task_names)):  # one layer-curve figure per task, none swallowed
        assert tree.css_first(f"div#curves-{i}") is not None
    assert tree.css_first("table#leaderboard") is not None
    assert tree.css_first("pre#manifest") is not None
    hrefs = [a.attributes["href"] or "" for a in tree.css("a[href]")]
    for href in hrefs:
        parsed = urlparse(href)
        assert href.startswith("./") and parsed.scheme == "" and parsed.netloc == ""
    assert {unquote(h).removeprefix("./") for h in hrefs} == files


@FUZZ
@given(models=models, tasks=tasks)
def test_model_and_task_names_never_break_the_page(models, tasks):
    subjects = [(m, "pretrained") for m in models] + [(models[0], "random")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_results(
            Path(tmp) / "run", subjects=subjects, tasks={t: (t, "syntax") for t in tasks}
        )
        expected = {*models, f"{models[0]}@random"}
        check_page(
            write_html(folder), expected, set(tasks), {"results.parquet", "leaderboard.parquet"}
        )


@FUZZ
@given(stem=file_names)
def test_file_names_never_become_script_links(stem):
    file = f"{stem}.parquet"
    if (
        stem in (*TABLES, "scores_ci", "leaderboard")
        or len(file.encode()) > 250
        or stem in (".", "..")
    ):
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_results(Path(tmp) / "run", file=file)
        files = {file, "leaderboard.parquet"}
        check_page(
            write_html(folder), {"bert", "bert@random", "glove"}, {"upos", "negation"}, files
        )
