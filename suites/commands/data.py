"""`lingprobe data list|fetch|path|verify`: the dataset registry and the local data folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from suites.datasets import DataSource, registry
from suites.datasets.home import ENV_HOME, ENV_MIRROR
from suites.datasets.references import add_trust_local_option


def _source(args: argparse.Namespace) -> DataSource:
    home = Path(args.data) if args.data else None
    return DataSource(
        home=home,
        mirror=getattr(args, "mirror", None),
        progress=True,
        trust_local=getattr(args, "trust_local", False),
    )


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000  # type: ignore[assignment]
    return f"{n} B"


def list_datasets(args: argparse.Namespace) -> int:
    """Handler of `lingprobe data list`."""
    source = _source(args)
    rows = [
        (d.name, _size(d.size), d.licence.split(" (")[0].split(":")[0], source.state(d.name))
        for d in registry().values()
    ]
    widths = [
        max(len(r[i]) for r in [*rows, ("name", "size", "licence", "state")]) for i in range(4)
    ]
    header = ("name", "size", "licence", "state")
    for row in (header, *rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    print(f"\ndata folder: {source.folder} (set {ENV_HOME} or --data to change it)")
    return 0


def fetch(args: argparse.Namespace) -> int:
    """Handler of `lingprobe data fetch NAME...`."""
    source = _source(args)
    for name in args.names:
        paths = source.fetch(name)
        print(f"{name}: {len(paths)} files verified in {source.folder}")
    return 0


def path(args: argparse.Namespace) -> int:
    """Handler of `lingprobe data path NAME`: the folder holding the dataset (fetched if needed)."""
    source = _source(args)
    paths = source.fetch(args.name)
    parents = {p.parent for p in paths}
    common = min(parents, key=lambda p: len(p.parts))
    while not all(common == p or common in p.parents for p in parents):
        common = common.parent
    print(common)
    return 0


def verify(args: argparse.Namespace) -> int:
    """Handler of `lingprobe data verify`: re-hash every registry file in the data folder."""
    source = _source(args)
    checked = damaged = 0
    for name, file_path, intact in source.verify():
        checked += 1
        if not intact:
            damaged += 1
            if file_path.exists():
                what = "left as it is: move it away to fetch it again, or run with --trust-local"
            else:
                what = "moved aside to NAME.corrupt-<time>; the next use fetches it again"
            print(f"DAMAGED  {name}: {file_path} ({what})")
    print(f"{checked} files checked in {source.folder}, {damaged} damaged")
    return 1 if damaged else 0


def register(parsers: argparse._SubParsersAction) -> None:
    """Add `lingprobe data` and its subcommands."""
    data = parsers.add_parser(
        "data",
        help="list, fetch, locate and verify datasets",
        description="The dataset registry: every dataset lingprobe reads, pinned and hashed."
        f" Files live in a data folder: --data DIR, else ${ENV_HOME}, else the user cache.",
    )
    commands = data.add_subparsers(dest="data_command", metavar="SUBCOMMAND")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--data",
            default=None,
            metavar="DIR",
            help=f"data folder (default: ${ENV_HOME} or cache)",
        )

    p = commands.add_parser(
        "list",
        help="name, size, licence and cache state of every dataset",
        description="Name, size, licence and cache state of every dataset.",
    )
    common(p)
    p.set_defaults(handler=list_datasets)
    p = commands.add_parser(
        "fetch",
        help="download datasets into the data folder, verified",
        description="Download datasets into the data folder, verified.",
    )
    p.add_argument("names", nargs="+", metavar="NAME", help="registry names (see `data list`)")
    common(p)
    p.add_argument(
        "--mirror",
        default=None,
        metavar="URL",
        help=f"a base URL or folder holding the registry's paths (default: ${ENV_MIRROR})",
    )
    add_trust_local_option(p)
    p.set_defaults(handler=fetch)
    p = commands.add_parser(
        "path",
        help="print the folder holding a dataset (fetching it)",
        description="Print the folder holding a dataset (fetching it).",
    )
    p.add_argument("name", metavar="NAME", help="a registry name (see `lingprobe data list`)")
    common(p)
    p.add_argument("--mirror", default=None, metavar="URL", help="as for `fetch`")
    add_trust_local_option(p)
    p.set_defaults(handler=path)
    p = commands.add_parser(
        "verify",
        help="re-hash every dataset file in the data folder",
        description="Re-hash every dataset file in the data folder.",
    )
    common(p)
    p.set_defaults(handler=verify)

    def usage(args: argparse.Namespace) -> int:
        data.print_help()
        return 2

    data.set_defaults(handler=usage)
