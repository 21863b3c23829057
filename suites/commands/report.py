"""`lingprobe report DIR`: re-render tables and plots of any results folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from suites.outputs import read_manifest
from suites.provenance import describe_manifest
from suites.registry import suite_of_manifest
from suites.sweep import render
from suites.sweep.run import SUITE as SWEEP


def run(args: argparse.Namespace) -> int:
    """Render the folder with the suite its manifest names (or the sweep report)."""
    out = Path(args.dir)
    manifest = read_manifest(out)
    name = str(manifest["suite"])
    print(describe_manifest(manifest), end="\n\n")
    if name == SWEEP:
        render(out)
    else:
        suite_of_manifest(name).report(out)
    return 0


def register(parsers: argparse._SubParsersAction) -> None:
    """Add `lingprobe report`."""
    p = parsers.add_parser(
        "report",
        help="re-render tables and plots from a results folder",
        description="Re-render the tables and plots of a folder written by `lingprobe run`,"
        " `lingprobe demo` or `lingprobe sweep`, from its parquet files alone.",
    )
    p.add_argument("dir", help="a folder written by `lingprobe run ...`, `demo` or `sweep`")
    p.set_defaults(handler=run)
