"""`lingprobe run curriculum` and the curriculum part of `lingprobe report`."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import polars as pl

from internals import load_subject
from internals import sites as site_rules
from suites.curriculum.config import ANALYSES, PROBE_ANALYSES, CurriculumConfig
from suites.curriculum.data import load_phenomena, read_all
from suites.curriculum.finetune import FineTuneConfig
from suites.curriculum.report import last_site, summarise
from suites.curriculum.run import DEFAULT_ANALYSES, run_curriculum
from suites.datasets import FULL, SAMPLES, as_source
from suites.datasets.references import add_trust_local_option
from suites.errors import TaskError
from suites.overrides import apply, apply_probe, probe_options, probe_overrides
from suites.tasks import Task

FOLDER = "curriculum_nli"


def read_tasks(
    data: str, phenomena: list[str] | None, trust_local: bool = False
) -> dict[str, Task]:
    """The phenomena from the registry (`full`, `samples`) or a folder of phenomenon folders."""
    if data in (FULL, SAMPLES):
        return load_phenomena(phenomena, as_source(data, trust_local=trust_local))
    path = Path(data).expanduser()
    if not any(path.glob("*/train.jsonl")) and any((path / FOLDER).glob("*/train.jsonl")):
        path = path / FOLDER  # a data folder holding curriculum_nli/
    return read_all(path, phenomena)


def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError as error:
        raise TaskError(f"{text!r} is not a comma-separated list of integers") from error


def _names(text: str | None) -> list[str] | None:
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


def config_from(args: argparse.Namespace) -> CurriculumConfig:
    """`CurriculumConfig` from parsed options (the one override path: `suites.overrides`)."""
    own = {
        "sizes": _ints(args.sizes),
        "combine": tuple(_names(args.features) or ()),
        "pvi_folds": args.pvi_folds,
        "halves": args.halves,
        "layers": args.layers,
        "analyses": tuple(_names(args.analyses) or DEFAULT_ANALYSES),
    }
    config = apply(CurriculumConfig(), own, "options")
    changes = {"seeds": _ints(args.seeds), "kind": args.probe, "epochs": args.epochs}
    grid, train = apply_probe(config.grid, config.train, {**changes, **probe_overrides(args)})
    return dataclasses.replace(config, grid=grid, train=train)


def run(args: argparse.Namespace) -> int:
    """Handler of `lingprobe run curriculum`."""
    config = config_from(args)
    analyses = list(config.analyses)
    tasks = read_tasks(args.data, _names(args.phenomena), args.trust_local)
    if args.max_test is not None:
        tasks = {n: t.subsample({"test": args.max_test}, seed=0) for n, t in tasks.items()}
    if args.max_train is not None:
        tasks = {n: t.subsample({"train": args.max_train}, seed=0) for n, t in tasks.items()}
    subject = sites = nli_model = None
    if any(a in PROBE_ANALYSES for a in analyses):
        subject = load_subject(args.model, device=args.device)
        sites = site_rules.select(subject, config.layers)
    if {"zero-shot", "finetune"} & set(analyses):
        nli_model = load_subject(args.model, head="sequence-classification", device=args.device)
    out = run_curriculum(
        tasks,
        args.out,
        subject=subject,
        sites=sites,
        nli_model=nli_model,
        label_order=_names(args.label_order),
        analyses=analyses,
        config=config,
        finetune=FineTuneConfig(epochs=args.finetune_epochs),
        store=args.store,
        progress=not args.quiet,
    )
    report(out)
    print(f"\nwrote tables and plots to {out}/")
    return 0


def report(out: Path) -> None:
    """Write the summary tables and plots of a curriculum folder and print the headlines."""
    summaries = summarise(out)
    headlines = {
        "zero_shot": ("zero-shot", ["phenomenon", "mcc", "accuracy"]),
        "hypothesis_only": (
            "full vs hypothesis-only (test accuracy, last site)",
            ["phenomenon", "n_per_label", "full_mean", "hypothesis_mean", "gap"],
        ),
        "v_information": (
            "V-information (bits, last site)",
            ["phenomenon", "split", "v_information", "n_items"],
        ),
        "cross_distribution_matrix": (
            "cross-distribution accuracy (last site)",
            ["phenomenon", "train_half", "test_half", "mean", "std"],
        ),
    }
    with pl.Config(tbl_rows=60, tbl_cols=12, fmt_str_lengths=30):
        for name, (title, columns) in headlines.items():
            if name in summaries:
                table = summaries[name]
                table = last_site(table) if "site" in table.columns else table
                print(f"{title}:\n{table.select(columns)}")
    print(f"summaries and plots in {out}/")


def register(parsers: argparse._SubParsersAction) -> None:
    """Add `lingprobe run curriculum`."""
    p = parsers.add_parser(
        "curriculum",
        help="curriculum NLI diagnostics (zero-shot, inoculation, PVI, ...)",
        description="Curriculum NLI (Chen & Gao 2022): zero-shot MCC, inoculation curves,"
        " hypothesis-only baseline, V-information difficulty and cross-distribution tests.",
    )
    p.add_argument(
        "--model",
        default="sentence-transformers/all-MiniLM-L6-v2",
        help="the model whose features the probes read (zero-shot/finetune: its NLI head)",
    )
    p.add_argument(
        "--data",
        default=FULL,
        help=f"{FULL} (the registry's curriculum-nli, fetched once), {SAMPLES} (the shipped"
        " sample) or a folder of <phenomenon>/train.jsonl, val.jsonl (default: %(default)s)",
    )
    add_trust_local_option(p)
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument(
        "--phenomena",
        default=None,
        help="comma-separated (default: the eight typed phenomena the data offers)",
    )
    p.add_argument(
        "--analyses",
        default=",".join(DEFAULT_ANALYSES),
        help=f"comma-separated from {', '.join(ANALYSES)}",
    )
    p.add_argument("--layers", default="all", help="all | last | 0,3,6 (default: all)")
    p.add_argument(
        "--features",
        default="premise,hypothesis",
        help="pair parts: premise,hypothesis,abs_diff,product",
    )
    p.add_argument("--sizes", default="10,50,100,500,1000", help="examples per label")
    p.add_argument("--seeds", default="0,1,2", help="subsample and probe seeds")
    p.add_argument("--probe", choices=["linear", "mlp"], default="linear", help="probe kind")
    p.add_argument("--epochs", type=int, default=20, help="probe epochs (Holmes App. A.2: 20)")
    p.add_argument("--pvi-folds", type=int, default=5, help="cross-fitting folds for train PVI")
    p.add_argument(
        "--halves",
        choices=["global", "per_label"],
        default="global",
        help="cut simple/hard by PVI over all items or within each label",
    )
    p.add_argument(
        "--label-order",
        default=None,
        help="the NLI model's class names in order, when id2label has none",
    )
    p.add_argument("--finetune-epochs", type=int, default=3, help="paper App. D: 3")
    p.add_argument("--max-train", type=int, default=None, help="at most N train items each")
    p.add_argument("--max-test", type=int, default=None, help="at most N val items each")
    p.add_argument("--device", default=None, help="torch device (default: the model's)")
    p.add_argument("--store", default=None, help="activation store folder (cache)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    defaults = CurriculumConfig()
    probe_options(p, defaults.grid, defaults.train)
    p.set_defaults(handler=run)
