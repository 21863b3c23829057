"""The `lingprobe` command: `demo`, `run <suite>`, `report DIR`, and what suites register.

Each module in `suites.commands` adds its subcommands through `register(parsers)`; a handler gets
the parsed arguments. Errors lingprobe raises on purpose print as one line and exit with code 2.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import suites.commands
from lingprobe.errors import LingprobeError


@dataclass(frozen=True)
class CommandParsers:
    """Where suites hang their subcommands: top level (`lingprobe X`) and `lingprobe run X`."""

    top: argparse._SubParsersAction
    run: argparse._SubParsersAction


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, with every registered command."""
    parser = argparse.ArgumentParser(
        prog="lingprobe",
        description="Probe what language models know inside: layer-wise probes over suites.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    top = parser.add_subparsers(dest="command", metavar="COMMAND")
    run_parser = top.add_parser("run", help="run one suite on one or more models")
    run = run_parser.add_subparsers(dest="suite", metavar="SUITE")

    def run_without_suite(args: argparse.Namespace) -> int:
        run_parser.print_help()
        return 2

    run_parser.set_defaults(handler=run_without_suite)
    parsers = CommandParsers(top, run)
    for module in pkgutil.iter_modules(suites.commands.__path__):
        importlib.import_module(f"suites.commands.{module.name}").register(parsers)
    return parser


EXPECTED_ERRORS = (LingprobeError, FileNotFoundError, NotADirectoryError, ValueError, KeyError)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `lingprobe` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return int(handler(args) or 0)
    except EXPECTED_ERRORS as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        print(f"lingprobe: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
