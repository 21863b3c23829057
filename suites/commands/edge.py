"""`lingprobe run edge` and the edge part of `lingprobe report`."""

from __future__ import annotations

import argparse
from pathlib import Path

from internals import load_subject
from internals import sites as site_rules
from suites.datasets import resolve_file
from suites.edge.conllu import read_conllu
from suites.edge.experiment import EdgeConfig, run_edge
from suites.edge.jiant import read_jiant
from suites.edge.report import render, save_unit
from suites.edge.semeval import read_semeval
from suites.tasks import Task

TASK_HELP = "conllu:upos | conllu:xpos | conllu:deprel | conllu:arc | jiant | semeval"


def read_task(
    spec: str, file: str, split: str, limit: int | None, data: str | Path | None = None
) -> Task:
    """Read one side (train or test) of an edge task named like `conllu:upos`.

    `file` is a path or a registry reference such as `ud-english-ewt:train` (resolved in `data`).
    """
    reader, _, variant = spec.partition(":")
    path = resolve_file(file, data, what=f"--{split}")
    if reader == "conllu":
        return read_conllu(path, variant or "upos", split=split, limit_sentences=limit)  # type: ignore[arg-type]
    if reader == "jiant":
        return read_jiant(path, split=split)
    if reader == "semeval":
        return read_semeval(path, split=split)
    raise ValueError(f"--task {spec!r} is unknown; choose {TASK_HELP}")


def add_probe_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by `run edge` and `demo`."""
    parser.add_argument("--layers", default="all", help="all | last | 0,3,6 (default: all)")
    parser.add_argument("--probe", choices=["linear", "mlp"], default="linear")
    parser.add_argument("--seeds", type=int, default=3, help="probe seeds (paper: 3)")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--no-control", action="store_true", help="skip the control task")
    parser.add_argument(
        "--legacy-keys",
        action="store_true",
        help="heuristic keys as in the authors' code (see docs)",
    )
    parser.add_argument("--store", default=None, help="activation store folder (cache)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")


def config_from(args: argparse.Namespace) -> EdgeConfig:
    """`EdgeConfig` from parsed options."""
    return EdgeConfig(
        probe=args.probe,
        seeds=tuple(range(args.seeds)),
        control=not args.no_control,
        epochs=args.epochs,
        legacy_keys=args.legacy_keys,
    )


def run(args: argparse.Namespace) -> int:
    """Handler of `lingprobe run edge`."""
    train = read_task(args.task, args.train, "train", args.limit_sentences)
    test = read_task(args.task, args.test, "test", args.limit_sentences)
    subjects = [load_subject(args.model, init=init.strip()) for init in args.init.split(",")]
    chosen = site_rules.select(subjects[0], args.layers)
    results = run_edge(
        subjects, train, test, chosen, config_from(args), store=args.store, progress=not args.quiet
    )
    out = Path(args.out)
    save_unit(results, out, args.legacy_keys)
    render(out)
    print(f"\nwrote tables and plots to {out}/")
    return 0


def report(out: Path) -> None:
    """Re-render an edge output folder from its parquet files."""
    render(out)


def register(parsers) -> None:
    """Add `lingprobe run edge`."""
    p = parsers.run.add_parser(
        "edge",
        help="edge probing with annotation-artifact filters",
        description="Edge probing: probes on original and heuristically"
        " filtered test sets, pretrained vs random encoders.",
    )
    p.add_argument("--model", default="sentence-transformers/all-MiniLM-L6-v2")
    p.add_argument(
        "--init",
        default="pretrained,random",
        help="pretrained, random, or both comma-separated (default: both)",
    )
    p.add_argument("--task", default="conllu:upos", help=TASK_HELP)
    p.add_argument(
        "--train", required=True, help="training file, or a registry file like ud-english-ewt:train"
    )
    p.add_argument(
        "--test", required=True, help="test file, or a registry file like ud-english-ewt:dev"
    )
    p.add_argument("--limit-sentences", type=int, default=None, help="read at most N sentences")
    p.add_argument("--out", required=True, help="output folder")
    add_probe_options(p)
    p.set_defaults(handler=run)
