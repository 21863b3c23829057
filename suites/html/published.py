"""The explorer's section for a run ranked against the published Holmes leaderboard
(`lingprobe run holmes --against-published`): the combined ranking with the run's own models
marked, their intervals, and the protocol differences to read it with."""

from __future__ import annotations

import html
from pathlib import Path

from suites.holmes.against_published import TABLE, read_comparison

MARK = "◆"  # before the name of a model this run probed


def published_sections(files: tuple[Path, ...]) -> list[str]:
    """One section per ranking file among the folder's parquet `files` (none, usually one)."""
    return [_section(path) for path in files if path.name == TABLE]


def _section(path: Path) -> str:
    comparison = read_comparison(path)
    rows = []
    for row in comparison.ranking.iter_rows(named=True):
        mine = bool(row["this_run"])
        name = html.escape(str(row["model"]))
        cells = [
            f"{row['rank']:g}",
            f"{row['rank_low']:g}–{row['rank_high']:g}",
            f"<strong>{MARK} {name}</strong>" if mine else name,
            f"{row['mwr']:.3f}",
            f"{row['ci_low']:.3f}–{row['ci_high']:.3f}",
            str(row["n_datasets"]),
        ]
        attributes = " class='this-run'" if mine else ""
        rows.append(f"<tr{attributes}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    head = "".join(
        f"<th>{words}</th>"
        for words in ("rank", "rank interval", "model", "mwr", "mwr interval", "datasets")
    )
    differences = "".join(f"<li>{html.escape(item)}</li>" for item in comparison.differences)
    return (
        "<h2>On the published Holmes leaderboard</h2><p class='note'>Mean winning rate over the"
        f" {len(comparison.shared)} datasets this run shares with the published leaderboard,"
        f" {comparison.ranking.height} models, 95% bootstrap intervals over datasets;"
        f" {MARK} marks this run's models.</p>"
        f"<table id='against-published'><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
        "<h3>Protocol differences (read the ranking with these in mind)</h3>"
        f"<ul id='protocol-differences'>{differences}</ul>"
    )
