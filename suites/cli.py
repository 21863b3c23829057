"""The `lingprobe` command: `run <suite>`, `demo`, `sweep`, `report DIR`, `data` and the
analyses that are not probe units (`holmes-published`, `holmes-tasks`, `amnesic`,
`cc-semantics`, `curriculum-nli`).

`run` has one subcommand per suite of `suites.registry`, its flags generated from the suite's
config (`suites.commands.run`); every command lives in `suites.commands`. Errors lingprobe
raises on purpose (`LingprobeError`) print as one line and exit with code 2; anything else is a
bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from tqdm import tqdm
from transformers.utils import logging as transformers_logging

from lingprobe.errors import LingprobeError
from suites.commands import (
    amnesic,
    cc_semantics,
    curriculum_nli,
    data,
    demo,
    holmes_published,
    report,
    run,
    sweep,
)

TOP_COMMANDS = (run, demo, sweep, report, data)
ANALYSES = (holmes_published, amnesic, cc_semantics, curriculum_nli)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, with every command."""
    parser = argparse.ArgumentParser(
        prog="lingprobe",
        description="Probe what language models know inside: layer-wise probes over suites.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    top = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in (*TOP_COMMANDS, *ANALYSES):
        command.register(top)
    _show_defaults(parser)
    return parser


def _show_defaults(parser: argparse.ArgumentParser) -> None:
    """Every command's help shows each option's default."""
    parser.formatter_class = argparse.ArgumentDefaultsHelpFormatter
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _show_defaults(child)


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
    if not args.verbose:
        quiet_libraries()
    try:
        return int(handler(args) or 0)
    except LingprobeError as error:
        close_progress_bars()
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        print(f"lingprobe: error: {message}", file=sys.stderr)
        return 2


def quiet_libraries() -> None:
    """Third-party progress bars and info logs off (model loading, datasets, downloads): the
    command's own bars say what it does. `--verbose` keeps them."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    for name in ("pooch", "nnsight", "transformer_lens", "datasets", "httpx"):
        logging.getLogger(name).setLevel(logging.WARNING)


def close_progress_bars() -> None:
    """Close open progress bars so an error prints on a clean line of its own."""
    for bar in list(getattr(tqdm, "_instances", ())):
        bar.close()


if __name__ == "__main__":
    sys.exit(main())
