"""`lingprobe report DIR`: re-render tables and plots of any results folder."""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from suites.outputs import read_manifest


def run(args: argparse.Namespace) -> int:
    """Dispatch on the folder's manifest to the suite that wrote it."""
    out = Path(args.dir)
    suite = str(read_manifest(out)["suite"])
    module = importlib.import_module(f"suites.commands.{suite.split('-')[0].replace('-', '_')}")
    render = getattr(module, "report", None)
    if render is None:
        raise ValueError(f"suite {suite!r} in {out}/manifest.json has no report renderer")
    render(out)
    return 0


def register(parsers) -> None:
    """Add `lingprobe report`."""
    p = parsers.top.add_parser("report", help="re-render tables and plots from a results folder")
    p.add_argument("dir", help="a folder written by `lingprobe run ...` or `lingprobe demo`")
    p.set_defaults(handler=run)
