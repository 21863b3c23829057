"""`lingprobe run edge`: edge probing with annotation-artifact filters, from the command line."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from pathlib import Path

from internals import Subject, load_subject
from internals import sites as site_rules
from suites.datasets import as_source, resolve_file
from suites.datasets.references import add_data_option
from suites.edge.experiment import SUITE, EdgeConfig, run_edge
from suites.edge.readers import TASK_HELP, edge_task, read_task
from suites.edge.report import render, save_unit
from suites.outputs import finish_manifest, write_manifest
from suites.overrides import add_common_flags, apply, apply_probe, common_overrides
from suites.provenance import dataset_record, model_record
from suites.suite import Limits, identity


def add_edge_options(parser: argparse.ArgumentParser, defaults: EdgeConfig) -> None:
    """Options shared by `run edge` and `demo`: sites, probe settings, keys, store, quiet."""
    parser.add_argument(
        "--layers", default=defaults.layers, help="all | last | 0,3,6 (default: %(default)s)"
    )
    parser.add_argument(
        "--legacy-keys",
        action="store_true",
        help="heuristic keys as in the authors' code (see the methods docs)",
    )
    parser.add_argument("--store", default=None, help="activation store folder (cache)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    add_common_flags(parser, defaults.grid, defaults.train)


def config_from(args: argparse.Namespace, base: EdgeConfig | None = None) -> EdgeConfig:
    """`EdgeConfig` from parsed options (the one override path: `suites.overrides`)."""
    config = base or EdgeConfig()
    own = {"layers": args.layers, "legacy_keys": args.legacy_keys}
    for option, field in (("task", "task"), ("train", "train_file"), ("test", "test_file")):
        if getattr(args, option, None) is not None:
            own[field] = getattr(args, option)
    config = apply(config, own, "options")
    grid, train = apply_probe(config.grid, config.train, common_overrides(args), "options")
    limits = Limits(sentences=getattr(args, "limit_sentences", None))
    return dataclasses.replace(config, grid=grid, train=train, limits=limits)


def edge_manifest(
    out: Path,
    subjects: Sequence[Subject],
    config: EdgeConfig,
    dataset: str,
    files: Sequence[Path],
    tasks: Sequence[str],
) -> None:
    """Start the folder's provenance manifest: models, data with hashes, settings, tasks."""
    write_manifest(
        out,
        SUITE,
        models=[model_record(s) for s in subjects],
        data=[dataset_record(dataset, list(files))],
        settings=identity(config),
        tasks=list(tasks),
    )


def run(args: argparse.Namespace) -> int:
    """Handler of `lingprobe run edge`: data, settings and models checked before `--out`."""
    config = config_from(args)
    sentences = config.limits.sentences
    data = as_source(args.data, progress=not args.quiet)
    train = read_task(config.task, config.train_file, "train", sentences, data)
    test = read_task(config.task, config.test_file, "test", sentences, data)
    subjects = [load_subject(args.model, init=init.strip()) for init in args.init.split(",")]
    chosen = site_rules.select(subjects[0], config.layers)
    out = Path(args.out)
    files = [resolve_file(config.train_file, data), resolve_file(config.test_file, data)]
    edge_manifest(out, subjects, config, config.task, files, [train.name])
    results = run_edge(
        subjects, train, test, chosen, config, store=args.store, progress=not args.quiet
    )
    save_unit(results, out, config.legacy_keys)
    render(out)
    finish_manifest(out, SUITE)
    print(f"\nwrote tables and plots to {out}/")
    return 0


def register(parsers: argparse._SubParsersAction) -> None:
    """Add `lingprobe run edge`."""
    p = parsers.add_parser(
        "edge",
        help="edge probing with annotation-artifact filters",
        description="Edge probing (Sahu et al.): probes on original and heuristically"
        " filtered test sets, pretrained vs random encoders.",
    )
    p.add_argument(
        "--model",
        default="sentence-transformers/all-MiniLM-L6-v2",
        help="a hub id, folder, short name (minilm, smollm2) or glove:6B.50d"
        " (default: %(default)s)",
    )
    p.add_argument(
        "--init",
        default="pretrained,random",
        help="pretrained, random, or both comma-separated (default: %(default)s)",
    )
    p.add_argument(
        "--task",
        default="conllu:upos",
        type=edge_task,
        help=f"{TASK_HELP} (default: %(default)s)",
    )
    p.add_argument(
        "--train", required=True, help="training file, or a registry file like ud-english-ewt:train"
    )
    p.add_argument(
        "--test", required=True, help="test file, or a registry file like ud-english-ewt:dev"
    )
    p.add_argument("--limit-sentences", type=int, default=None, help="read at most N sentences")
    add_data_option(p)
    p.add_argument("--out", required=True, help="output folder")
    add_edge_options(p, EdgeConfig())
    p.set_defaults(handler=run)
