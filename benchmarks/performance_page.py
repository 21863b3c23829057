"""Render `docs/performance.md` from the benchmarks' latest JSON figures.

`python -m benchmarks.performance_page` reads `.benchmarks/figures/*.json` (written by
`benchmarks/figures.py` during `python3 noxfile.py -s bench`) and rewrites the page: one table of
each benchmark's ratio against what a user would otherwise use, its goal, the machine and the
commit, then how each number is measured, taken once per benchmark file from its docstring.
`--figures DIR` reads another folder, `--out FILE` writes elsewhere (`-` for stdout).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks.figures import ROOT, figures_dir

INTRO = """\
# Performance

Every hot path has a benchmark in `benchmarks/` (files `bench_*.py`) that times lingprobe and
what a user would otherwise write **in the same run**, prints the ratio and writes its figures
as JSON under `.benchmarks/figures/`. This page is generated from the latest JSON of each
benchmark by `python -m benchmarks.performance_page`; do not edit it by hand. The dated
measurements of earlier versions are in `benchmarks/HISTORY.md`.

```bash
python3 noxfile.py -s bench -- -m quick                       # the quick set (minutes)
python3 noxfile.py -s bench                                   # every benchmark
python3 noxfile.py -s bench -- benchmarks/bench_extract.py    # one file
python -m benchmarks.performance_page                         # this page, from the JSON
```

Markers: `quick` (the quick set) or `full`; `needs_data` (reads the full datasets: set
`LINGPROBE_DATA` to a folder holding the registry's files, e.g. after
`lingprobe data fetch ud-english-ewt curriculum-nli`) and `cuda` (needs a GPU; skipped
without). The session runs without the tests' beartype/jaxtyping instrumentation, which would
be timed too. Numbers depend on the machine and its load (shown per row): compare ratios from
the same run, not times across machines.
"""


def load_figures(folder: Path) -> list[dict[str, Any]]:
    """Every figures file in `folder`, ordered by benchmark file and test."""
    records = [json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))]
    return sorted(records, key=lambda r: (r["file"], r["benchmark"]))


def docstring(file: str, root: Path = ROOT) -> str:
    """The module docstring of a benchmark file (read, not imported)."""
    path = root / file
    if not path.exists():
        return ""
    return ast.get_docstring(ast.parse(path.read_text())) or ""


def cell(text: object) -> str:
    """A Markdown table cell: pipes escaped, one line."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def ratio_text(record: dict[str, Any]) -> str:
    ratio = record.get("ratio")
    return "—" if ratio is None else f"**{ratio:.2f}×**"


def goal_text(record: dict[str, Any]) -> str:
    at_least, at_most = record.get("at_least"), record.get("at_most")
    parts = [f"≥ {at_least:g}×" if at_least is not None else ""]
    parts.append(f"≤ {at_most:g}×" if at_most is not None else "")
    goal = ", ".join(p for p in parts if p) or "—"
    met = record.get("met")
    return goal if met is None else f"{goal} ({'met' if met else 'missed'})"


def machine_text(record: dict[str, Any]) -> str:
    m = record.get("machine") or {}
    text = f"{m.get('cpu', '?')}, {m.get('cpus', '?')} CPUs"
    if m.get("gpu"):
        text += f", {m['gpu']}"
    load = record.get("load_average")
    if load:
        text += f"; load {load[0]:.1f}"
    return text


def commit_text(record: dict[str, Any]) -> str:
    commit = record.get("commit") or "?"
    return f"`{commit}`{' (modified)' if record.get('dirty') else ''}"


def table(records: Iterable[dict[str, Any]]) -> list[str]:
    lines = [
        "| benchmark | against | ratio | goal | peak RSS | machine | commit | date |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in records:
        peak = r.get("peak_rss_mib")
        peak_text = "—" if peak is None else f"{peak:,.0f} MiB"
        lines.append(
            "| "
            + " | ".join(
                cell(x)
                for x in (
                    f"`{r['benchmark']}`",
                    r.get("against", ""),
                    ratio_text(r),
                    goal_text(r),
                    peak_text,
                    machine_text(r),
                    commit_text(r),
                    (r.get("date") or "?")[:10],
                )
            )
            + " |"
        )
    return lines


def render(records: list[dict[str, Any]], root: Path = ROOT) -> str:
    """The whole page."""
    out = [INTRO, "## Latest results", ""]
    if not records:
        out.append("No figures yet: run `python3 noxfile.py -s bench -- -m quick` first.")
    else:
        out.append(
            "A ratio is a speed-up (the alternative's time over lingprobe's: goal ≥) or an"
            " overhead (lingprobe's over the alternative's: goal ≤), as the row's goal says."
            " Peak RSS is given where the benchmark measures a job in its own process."
        )
        out += ["", *table(records)]
    out += ["", "## How each number is measured", ""]
    for file in dict.fromkeys(r["file"] for r in records):
        text = docstring(file, root)
        out += [f"### `{file}`", "", text or "(no description)", ""]
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.performance_page")
    parser.add_argument("--figures", type=Path, default=None, help="folder of figures JSON")
    parser.add_argument("--out", default=str(ROOT / "docs" / "performance.md"))
    args = parser.parse_args(argv)
    page = render(load_figures(args.figures or figures_dir()))
    if args.out == "-":
        sys.stdout.write(page)
    else:
        Path(args.out).write_text(page)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
