"""`lingprobe holmes-published`: rankings and the FlashHolmes curve of the published Holmes
leaderboards (Waldis et al. 2024), and `lingprobe holmes-tasks`: the Holmes task names.

Not probe units: the published leaderboards are read, not run (`lingprobe run holmes` runs
models).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from suites.commands import flags
from suites.holmes.catalog import available_tasks
from suites.holmes.summary import print_summary, write_published
from suites.outputs import read_manifest, write_manifest

MANIFEST = "holmes-published"


def run(args: argparse.Namespace) -> int:
    """Handler of `lingprobe holmes-published`."""
    out = flags.out_path(args)
    files = {"holmes_file": args.leaderboard, "flash_file": args.flash_leaderboard}
    summary = write_published(out, flags.data_source(args), **files)
    write_manifest(out, MANIFEST, data=str(args.data or ""), **files)
    print_summary(summary)
    print(f"\nwrote the published leaderboards' tables and plots to {out}/")
    return 0


def report(out: Path) -> None:
    """Re-render a holmes-published folder."""
    manifest = read_manifest(out)
    summary = write_published(
        out,
        manifest.get("data") or None,
        holmes_file=manifest.get("holmes_file"),
        flash_file=manifest.get("flash_file"),
    )
    print_summary(summary)


def list_tasks(args: argparse.Namespace) -> int:
    """Handler of `lingprobe holmes-tasks`."""
    print("\n".join(available_tasks(flags.data_source(args))))
    return 0


def register(parsers: argparse._SubParsersAction) -> None:
    """Add `lingprobe holmes-published` and `lingprobe holmes-tasks`."""
    p = parsers.add_parser(
        "holmes-published",
        help="rankings and FlashHolmes curve of the published Holmes leaderboards",
        description=__doc__,
    )
    flags.add_data(p)
    flags.add_output(p, store=False)
    p.add_argument(
        "--leaderboard",
        default=None,
        metavar="CSV",
        help="a Holmes leaderboard file in the published format (default: the registry's)",
    )
    p.add_argument(
        "--flash-leaderboard",
        default=None,
        metavar="CSV",
        help="a FlashHolmes leaderboard file in the published format (default: the registry's)",
    )
    p.set_defaults(handler=run)
    t = parsers.add_parser(
        "holmes-tasks", help="the Holmes task names (`lingprobe run holmes --tasks`)"
    )
    flags.add_data(t)
    t.add_argument("--quiet", action="store_true", help="no progress bars")
    t.set_defaults(handler=list_tasks)
