"""`lingprobe run holmes` and the Holmes part of `lingprobe report`."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import polars as pl

from suites.datasets.references import add_data_option
from suites.errors import TaskError
from suites.flash import FLASH_FRACTIONS
from suites.holmes.against_published import (
    against_published,
    published_tasks,
    summary_lines,
    write_comparison,
)
from suites.holmes.catalog import available_tasks
from suites.holmes.models import RANDOM_SUFFIX
from suites.holmes.run import LEADERBOARD, HolmesConfig, collect_leaderboard, run_holmes
from suites.holmes.summary import HolmesSummary, write_published, write_summary
from suites.outputs import read_manifest, write_manifest
from suites.overrides import add_common_flags, apply, apply_probe, common_overrides
from suites.suite import Limits

PUBLISHED = "holmes-published"


def config_from(args: argparse.Namespace) -> HolmesConfig:
    """`HolmesConfig` from parsed options (the one override path: `suites.overrides`)."""
    config = apply(HolmesConfig(), {"layers": args.layers}, "options")
    changes = common_overrides(args)
    fractions = list(args.fractions or ())
    if args.flash:
        fractions += FLASH_FRACTIONS
    if fractions:
        changes["train_fractions"] = (1.0, *fractions)
    grid, train = apply_probe(config.grid, config.train, changes, "options")
    limits = Limits(
        args.max_train, args.max_dev, args.max_test, args.max_sentences, args.blimp_pairs
    )
    return dataclasses.replace(
        config,
        grid=grid,
        train=train,
        limits=limits,
        against_published=bool(getattr(args, "against_published", False)),
    )


def run(args: argparse.Namespace) -> int:
    """Handler of `lingprobe run holmes`."""
    if args.list_tasks:
        print("\n".join(available_tasks(args.data)))
        return 0
    if not args.out:
        raise TaskError("give --out DIR (the results folder)")
    out = Path(args.out)
    if args.published:
        files = {"holmes_file": args.leaderboard, "flash_file": args.flash_leaderboard}
        summary = write_published(out, args.data, **files)
        write_manifest(out, PUBLISHED, data=str(args.data or ""), **files)
        _print(summary)
        print(f"\nwrote the published leaderboards' tables and plots to {out}/")
        return 0
    config = config_from(args)
    tasks = args.tasks
    if config.against_published and not tasks:
        tasks = published_tasks(args.data)  # every dataset the leaderboard has and we build
    if not args.models or not tasks:
        raise TaskError(
            "give --models and --tasks (or --models and --against-published, or --published, or"
            " --list-tasks)"
        )
    models = list(args.models)
    if args.twins:
        models += [m + RANDOM_SUFFIX for m in args.models if not m.endswith(RANDOM_SUFFIX)]
    board = run_holmes(
        models,
        tasks,
        out,
        config=config,
        data=args.data,
        store=args.store,
        device=args.device,
        progress=not args.quiet,
    )
    report(out)
    print(f"\nwrote {LEADERBOARD}, tables and plots to {out}/")
    if config.against_published:
        comparison = against_published(board, config, args.data, leaderboard_file=args.leaderboard)
        page = write_comparison(comparison, out)
        print("\n" + "\n".join(summary_lines(comparison)))
        print(f"\nwrote the combined leaderboard to {page}")
    return 0


def report(out: Path) -> None:
    """Re-render a Holmes output folder (a run's leaderboard or the published one)."""
    manifest = read_manifest(out)
    if manifest.get("suite") == PUBLISHED:
        summary = write_published(
            out,
            manifest.get("data") or None,
            holmes_file=manifest.get("holmes_file"),
            flash_file=manifest.get("flash_file"),
        )
    else:
        board = collect_leaderboard(out)
        summary = write_summary(board, out)
    _print(summary)


def _print(summary: HolmesSummary) -> None:
    with pl.Config(tbl_rows=20, tbl_cols=12, fmt_str_lengths=60, tbl_width_chars=160):
        if summary.ranking is None:
            print("one model only: no ranking (run two or more models)")
            return
        overall = summary.ranking.filter(pl.col("group") == "overall").drop("group")
        print("overall ranking (mean winning rate [95% bootstrap interval over datasets], top 10):")
        print(
            overall.head(10).select(
                "model",
                mwr=pl.format(
                    "{} [{}, {}]",
                    pl.col("mwr").round(3),
                    pl.col("ci_low").round(3),
                    pl.col("ci_high").round(3),
                ),
                rank="rank",
                ranks=pl.format("{}-{}", pl.col("rank_low"), pl.col("rank_high")),
                n_datasets="n_datasets",
            )
        )
        if summary.flash is not None:
            print("\nreliability vs efficiency (FlashHolmes):")
            print(
                summary.flash.select(
                    "k",
                    "rank_resolution",
                    "ci_low",
                    "ci_high",
                    "mean_abs_shift",
                    "kendall_tau",
                    "n_datasets",
                    "train_share",
                )
            )


def register(parsers: argparse._SubParsersAction) -> None:
    """Add `lingprobe run holmes`."""
    p = parsers.add_parser(
        "holmes",
        help="Holmes benchmark: probe models on Holmes-style datasets, rank them",
        description="Holmes (Waldis et al. 2024): every model x dataset probed at the chosen"
        " layers (5 seeds, control task, MDL), a leaderboard, mean-winning-rate rankings and"
        " FlashHolmes rank resolution. Resumable: rerun the same command to continue.",
    )
    p.add_argument(
        "--models",
        nargs="+",
        help="model names; NAME@random = random-init twin"
        " (e.g. minilm minilm@random glove:6B.50d smollm2)",
    )
    p.add_argument("--twins", action="store_true", help="add the random twin of every model")
    p.add_argument(
        "--tasks",
        nargs="+",
        help="task names (see --list-tasks; ud-<treebank>:feats:<Feature> too), groups blimp,"
        " zorro, ewt, curriculum, ud-<treebank>, or Holmes release folders",
    )
    p.add_argument("--layers", default="last", help="last (Holmes) | all | 0,3,-1")
    p.add_argument("--out", help="output folder (resumable)")
    add_data_option(p)
    p.add_argument("--no-mdl", action="store_true", help="skip MDL (compression)")
    p.add_argument("--flash", action="store_true", help="also train on 1/2 ... 1/512 of train")
    p.add_argument("--fractions", nargs="*", type=float, help="extra train fractions in (0, 1)")
    p.add_argument("--max-train", type=int, default=None, help="cap train items (whole sentences)")
    p.add_argument("--max-dev", type=int, default=None, help="cap dev items")
    p.add_argument("--max-test", type=int, default=None, help="cap test items")
    p.add_argument("--max-sentences", type=int, default=None, help="cap sentences read per file")
    p.add_argument("--blimp-pairs", type=int, default=None, help="minimal pairs per BLiMP paradigm")
    p.add_argument("--store", default=None, help="activation store (default OUT/store)")
    p.add_argument("--device", default=None, help="probe training device (default: features')")
    p.add_argument(
        "--published",
        action="store_true",
        help="instead of a run: rankings and FlashHolmes curve of the published leaderboards"
        " (holmes-leaderboards in the dataset registry, fetched once)",
    )
    p.add_argument(
        "--against-published",
        action="store_true",
        help="rank --models among the published leaderboard's models by mean winning rate over"
        " the datasets both have (default --tasks: every such dataset lingprobe builds)",
    )
    p.add_argument(
        "--leaderboard",
        default=None,
        metavar="CSV",
        help="with --published or --against-published: a Holmes leaderboard file in the"
        " published format instead",
    )
    p.add_argument(
        "--flash-leaderboard",
        default=None,
        metavar="CSV",
        help="with --published: a FlashHolmes leaderboard file in the published format instead",
    )
    p.add_argument("--list-tasks", action="store_true", help="print the task names and exit")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    defaults = HolmesConfig()
    add_common_flags(p, defaults.grid, defaults.train)
    p.set_defaults(handler=run)
