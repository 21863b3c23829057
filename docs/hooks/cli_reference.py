"""mkdocs hook: the CLI reference page, rendered at build time from `suites.cli.build_parser()`.

Every command's and subcommand's `format_help()` goes into `cli.md`, so the page can never drift
from the argparse definitions. The page is generated in memory (no file in `docs/`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

PAGE = "cli.md"
INTRO = """# CLI reference

Generated at build time from the argparse definitions (`suites.cli.build_parser()`); every
option shows its default. Errors lingprobe raises on purpose print as one line and exit with
code 2.
"""


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """`(command words, parser)` for `parser` and every subcommand below it, depth first."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _commands(child, (*path, name))


def render() -> str:
    """The whole page: one section per command with its `--help` text."""
    from suites.cli import build_parser

    os.environ.setdefault("COLUMNS", "100")  # argparse wraps to the terminal width
    sections = [INTRO]
    for path, parser in _commands(build_parser(), ("lingprobe",)):
        title = " ".join(path)
        level = "#" * min(len(path) + 1, 4)
        sections.append(f"{level} `{title}`\n\n```text\n{parser.format_help().rstrip()}\n```\n")
    return "\n".join(sections)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated CLI page to the site."""
    files.append(File.generated(config, PAGE, content=render()))
    return files
