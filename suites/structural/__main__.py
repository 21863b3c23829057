"""Plain entry point until the suite registry lands (`lingprobe run structural` comes then).

    python -m suites.structural probe --models minilm --random-twin --out DIR
    python -m suites.structural amnesic --model smollm2 --layers 6,15,24 --out DIR

Data: `--data` or $LINGPROBE_DATA, holding ud_english_ewt/. Train and dev come from EWT train
(the first `--train` sentences, then `--dev` more); test is the first `--test` sentences of EWT
dev (the shared mirror has no EWT test file).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl

from internals import load_subject
from internals import sites as site_rules
from probes import StructuralConfig
from suites.data_paths import data_file, shared_data
from suites.outputs import write_table
from suites.structural.amnesic import run_amnesic
from suites.structural.data import read_treebank
from suites.structural.experiment import StructuralSuiteConfig, run_structural
from suites.structural.report import best_layers, write_structural

EWT = "ud_english_ewt"


def _banks(args: argparse.Namespace):
    root = shared_data(args.data)
    train_file = data_file(root, EWT, "en_ewt-ud-train.conllu")
    train = read_treebank(train_file, limit_sentences=args.train)
    dev = read_treebank(train_file, limit_sentences=args.dev, skip_sentences=args.train)
    test = read_treebank(data_file(root, EWT, "en_ewt-ud-dev.conllu"), limit_sentences=args.test)
    return train, dev, test


def probe(args: argparse.Namespace) -> None:
    """Distance and depth probes at every layer of each model (and its random twin)."""
    train, dev, test = _banks(args)
    subjects = []
    for spec in args.models.split(","):
        subjects.append(load_subject(spec))
        if args.random_twin:
            subjects.append(load_subject(spec, init="random", seed=args.twin_seed))
    ranks = tuple(None if r == "full" else int(r) for r in args.ranks.split(","))
    config = StructuralSuiteConfig(
        seeds=tuple(int(s) for s in args.seeds.split(",")),
        ranks=ranks,
        probe=StructuralConfig(epochs=args.epochs),
    )
    sites = None if args.layers == "all" else site_rules.select(subjects[0], args.layers)
    frame = run_structural(subjects, train, dev, test, sites, config, store=args.store)
    write_structural(frame, args.out)
    with pl.Config(tbl_rows=40, tbl_cols=12):
        print(best_layers(frame))


def amnesic(args: argparse.Namespace) -> None:
    """LM loss with UPOS erased at each layer vs a random erasure of equal rank."""
    train, _, test = _banks(args)
    subject = load_subject(args.model, head="lm")
    sites = site_rules.select(subject, args.layers)
    frame = run_amnesic(
        subject,
        train,
        test.texts,
        sites,
        method=args.method,
        store=args.store,
    )
    write_table(frame, Path(args.out) / "amnesic.parquet")
    with pl.Config(tbl_rows=40, tbl_cols=12):
        print(frame)


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run one of the two experiments."""
    parser = argparse.ArgumentParser(prog="python -m suites.structural")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, run in (("probe", probe), ("amnesic", amnesic)):
        sub = commands.add_parser(name, help=run.__doc__)
        sub.set_defaults(run=run)
        sub.add_argument("--data", default=None, help="folder holding ud_english_ewt/")
        sub.add_argument("--out", required=True, type=Path)
        sub.add_argument("--store", default=None, help="activation store folder (cache)")
        sub.add_argument("--train", type=int, default=1500, help="EWT train sentences")
        sub.add_argument("--dev", type=int, default=300, help="next EWT train sentences")
        sub.add_argument("--test", type=int, default=1000, help="EWT dev sentences")
    probe_args = commands.choices["probe"]
    probe_args.add_argument("--models", default="minilm")
    probe_args.add_argument("--random-twin", action="store_true")
    probe_args.add_argument("--twin-seed", type=int, default=0)
    probe_args.add_argument("--layers", default="all")
    probe_args.add_argument("--seeds", default="0")
    probe_args.add_argument("--ranks", default="full", help="comma list; 'full' = hidden size")
    probe_args.add_argument("--epochs", type=int, default=StructuralConfig.epochs)
    amnesic_args = commands.choices["amnesic"]
    amnesic_args.add_argument("--model", default="smollm2")
    amnesic_args.add_argument("--layers", default="6,15,24")
    amnesic_args.add_argument("--method", choices=("leace", "inlp"), default="leace")
    args = parser.parse_args(argv)
    args.run(args)


if __name__ == "__main__":
    main()
