"""`lingprobe demo`: a preset of `lingprobe run edge` on the embedded MiniLM and UD English EWT.

MiniLM and its random twin, UPOS and dependency labels, every layer, with control tasks: the
three tables of the edge-probing paper (heuristics, drops, pretrained vs random) and the plots,
and one interactive HTML report. It takes every flag of `lingprobe run edge` but `--task`; by
default it reads the EWT sample shipped with lingprobe (the first 3,000 train and 800 dev
sentences: no download); `--data full` runs it on the full treebank (fetched once). Features are
cached in the activation store, so a rerun skips the forward passes, and a rerun into the same
`--out` resumes the units that have not finished.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from internals import MINILM, cache_root
from suites.commands.run import add_suite_options, run_and_report, suite_config, sweep_of
from suites.edge.suite import EdgeSuite
from suites.html import write_html
from suites.sweep.config import SuiteEntry

TASKS = ("conllu:upos", "conllu:deprel")


def run(args: argparse.Namespace) -> int:
    """Handler of `lingprobe demo`: `run edge` once per task, as one sweep."""
    started = time.perf_counter()
    config = suite_config(EdgeSuite(), args)
    entries = [SuiteEntry("edge", dataclasses.replace(config, task=task)) for task in TASKS]
    sweep = sweep_of(args, entries, store=cache_root() / "activations")
    print(f"lingprobe demo: {args.models} ({args.init}) on UD English EWT ({args.data})")
    print(f"  activation store: {sweep.store_path} (a rerun skips the forward passes)")
    run_and_report(sweep, args.quiet)
    page = write_html(sweep.out)
    print(f"done in {time.perf_counter() - started:.0f} s")
    print(f"interactive report: {page} ({page.stat().st_size / 1e6:.1f} MB, opens offline)")
    return 0


def register(parsers: argparse._SubParsersAction) -> None:
    """Add `lingprobe demo`."""
    p = parsers.add_parser(
        "demo",
        help="the embedded end-to-end job (MiniLM on UD EWT): a preset of `run edge`",
        description=__doc__,
    )
    add_suite_options(
        p,
        EdgeSuite(),
        skip=("task",),
        models=MINILM,
        init="pretrained,random",
        data="samples",
        out="lingprobe-out/demo",
    )
    p.set_defaults(handler=run)
