"""`lingprobe sweep CONFIG [--dry-run]` and the sweep part of `lingprobe report`."""

from __future__ import annotations

import argparse
import dataclasses

import polars as pl

from suites.sweep import load_config, plan_table, plan_units, render, run_sweep
from suites.sweep.config import EXECUTORS
from suites.sweep.cost import describe
from suites.sweep.merge import LEADERBOARD
from suites.sweep.plan import check_tasks
from suites.trackers import TRACKERS


def run(args: argparse.Namespace) -> int:
    """Handler of `lingprobe sweep`: exit code 1 when a unit failed (see failures.json)."""
    config = load_config(args.config)
    if args.log_to:
        config = dataclasses.replace(config, log_to=args.log_to)
    if args.dry_run:
        units = plan_units(config)
        check_tasks(config)
        table = plan_table(config, units)
        with pl.Config(tbl_rows=200, tbl_cols=12, fmt_str_lengths=60, tbl_width_chars=200):
            print(table.drop("unit"))
        print(describe(table))
        return 0
    summary = run_sweep(config, executor=args.executor, progress=not args.quiet)
    render(summary.out)
    print(
        f"\nthis run: {summary.ran} units run, {summary.skipped} skipped (finished before);"
        f" wrote {LEADERBOARD} and the report to {summary.out}/"
    )
    return 1 if summary.failed else 0


def register(parsers: argparse._SubParsersAction) -> None:
    """Add `lingprobe sweep`."""
    p = parsers.add_parser(
        "sweep",
        help="run a sweep config (models x suites x sites), resumable, local or on Ray",
        description="Run every (model, dataset group) unit of a TOML sweep config that has not"
        " finished yet; failures are recorded and do not stop the other units. Rerun the same"
        " command to continue. See suites/sweep/parse.py for the config format.",
    )
    p.add_argument("config", help="the sweep's TOML file")
    p.add_argument("--dry-run", action="store_true", help="print the units and their cost only")
    p.add_argument("--executor", choices=EXECUTORS, default=None, help="override [sweep] executor")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument(
        "--log-to",
        choices=TRACKERS,
        default=None,
        help="override [sweep] log_to: log each unit to mlflow or wandb",
    )
    p.set_defaults(handler=run)
