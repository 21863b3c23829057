"""`lingprobe report DIR`: re-render tables and plots of any results folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from suites.commands import amnesic, cc_semantics, holmes_published
from suites.errors import ReportError
from suites.html import write_html
from suites.html.page import FILE
from suites.outputs import read_manifest
from suites.provenance import describe_manifest
from suites.registry import suite_of_manifest
from suites.sweep import render
from suites.sweep.run import SUITE as SWEEP

ANALYSES = {m.MANIFEST: m.report for m in (holmes_published, amnesic, cc_semantics)}


def run(args: argparse.Namespace) -> int:
    """Render the folder with the suite its manifest names (or the sweep report)."""
    out = Path(args.dir)
    manifest = read_manifest(out)
    name = str(manifest["suite"])
    if args.out is not None and not args.html:
        raise ReportError("--out names the HTML file: give it with --html")
    if args.html:
        target = Path(args.out) if args.out is not None else out / FILE
        if target.is_dir():
            raise ReportError(f"--out {target} is a folder; give the HTML file's path")
        print(f"wrote {write_html(out, target)}")
        return 0
    print(describe_manifest(manifest), end="\n\n")
    if name == SWEEP:
        render(out)
    elif name in ANALYSES:
        ANALYSES[name](out)
    else:
        suite_of_manifest(name).report(out)
    return 0


def register(parsers: argparse._SubParsersAction) -> None:
    """Add `lingprobe report`."""
    p = parsers.add_parser(
        "report",
        help="re-render tables and plots from a results folder",
        description="Re-render the tables and plots of a folder written by `lingprobe run`,"
        " `demo`, `sweep` or an analysis command (or one unit folder of them), from its parquet"
        " files alone.",
    )
    p.add_argument("dir", help="a folder written by `lingprobe run ...`, `demo`, `sweep` ...")
    p.add_argument(
        "--html",
        action="store_true",
        help="write one self-contained interactive HTML explorer of the folder instead",
    )
    p.add_argument("--out", default=None, help=f"with --html: the HTML file (default DIR/{FILE})")
    p.set_defaults(handler=run)
