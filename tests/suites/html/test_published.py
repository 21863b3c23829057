"""The explorer shows a run ranked against the published Holmes leaderboard: the combined
ranking with the run's own models marked, and the protocol differences beside it."""

from __future__ import annotations

import polars as pl
from selectolax.lexbor import LexborHTMLParser

from suites.holmes.against_published import (
    THIS_RUN,
    compare_to_published,
    protocol_differences,
    write_comparison,
)
from suites.holmes.published import read_leaderboard
from suites.holmes.run import HolmesConfig
from suites.html import write_html
from tests.suites.holmes.leaderboards import MODELS, run_board, write_leaderboards
from tests.suites.html.results_folder import write_results


def test_the_explorer_marks_this_runs_models_on_the_published_leaderboard(tmp_path):
    holmes, _ = write_leaderboards(tmp_path)
    published = read_leaderboard(holmes)
    mine = pl.concat(
        [
            run_board(model="me/good", scores={f"ds-{d:02d}": 0.95 for d in range(12)}),
            run_board(model="me/poor", scores={f"ds-{d:02d}": 0.10 for d in range(12)}),
        ]
    )
    comparison = compare_to_published(
        mine, published, protocol_differences(HolmesConfig()), n_boot=50
    )
    run = write_results(tmp_path / "run")
    write_comparison(comparison, run / "holmes")

    tree = LexborHTMLParser(write_html(run).read_text(encoding="utf-8"))
    rows = tree.css("table#against-published tbody tr")
    assert len(rows) == len(MODELS) + 2
    names = [row.css("td")[2].text().strip() for row in rows]
    marked = [
        row.css("td")[2].text().strip()
        for row in rows
        if "this-run" in (row.attributes.get("class") or "")
    ]
    assert marked == [f"◆ me/good{THIS_RUN}", f"◆ me/poor{THIS_RUN}"]
    assert names[0] == marked[0] and names[-1] == marked[1]  # best and worst, in rank order
    assert set(names) - set(marked) == set(MODELS)
    shown = [li.text() for li in tree.css("ul#protocol-differences li")]
    assert shown == list(comparison.differences) and shown
