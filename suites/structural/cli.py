"""`lingprobe run structural` (distance and depth probes by layer) and `lingprobe run amnesic`
(LM loss with a concept erased at a site), from the command line."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import polars as pl

from internals import load_subject
from internals import sites as site_rules
from probes import StructuralConfig
from suites.datasets import resolve_file
from suites.datasets.references import add_data_option, data_source
from suites.errors import TaskError
from suites.outputs import finish_manifest, read_manifest, write_manifest, write_table
from suites.overrides import apply
from suites.provenance import dataset_record, model_record
from suites.structural.amnesic import run_amnesic
from suites.structural.config import StructuralSuiteConfig
from suites.structural.data import read_treebank
from suites.structural.experiment import SUITE, run_structural
from suites.structural.reading import read_banks
from suites.structural.report import TABLE, best_layers, render_structural, write_structural
from suites.suite import Limits, identity

AMNESIC = "structural-amnesic"
AMNESIC_TABLE = "amnesic.parquet"
MODEL_HELP = "hub ids, folders or short names (minilm, smollm2), comma-separated"


def config_from(args: argparse.Namespace) -> StructuralSuiteConfig:
    """`StructuralSuiteConfig` from parsed options (through `suites.overrides.apply`)."""
    own = {
        "layers": args.layers,
        "train_file": args.train,
        "test_file": args.test,
        "train_sentences": args.train_sentences,
        "dev_sentences": args.dev_sentences,
        "test_sentences": args.test_sentences,
        "seeds": args.seeds,
        "ranks": ",".join("none" if r.strip() == "full" else r for r in args.ranks.split(",")),
        "kinds": args.kinds,
    }
    config = apply(StructuralSuiteConfig(), own, "options")
    regimen = {"epochs": args.epochs, "lr": args.lr, "batch_size": args.batch_size}
    structural = apply(config.structural, regimen, "options")
    limits = Limits(sentences=args.limit_sentences)
    return dataclasses.replace(config, structural=structural, limits=limits)


def run(args: argparse.Namespace) -> int:
    """Handler of `lingprobe run structural`: data, settings and models checked before --out."""
    config = config_from(args)
    banks = read_banks(config, data_source(args))
    subjects = [
        load_subject(spec.strip(), init=init.strip())
        for spec in args.models.split(",")
        for init in args.init.split(",")
    ]
    sites = list(dict.fromkeys(site_rules.select(subjects[0], config.layers)))
    out = Path(args.out)
    write_manifest(
        out,
        SUITE,
        models=[model_record(s) for s in subjects],
        data=[dataset_record(banks.dataset, list(banks.files))],
        settings=identity(config),
    )
    rows = run_structural(
        subjects,
        banks.train,
        banks.dev,
        banks.test,
        sites,
        config,
        dataset=banks.dataset,
        store=args.store,
        progress=not args.quiet,
    )
    write_structural(rows, out)
    finish_manifest(out, SUITE)
    print_best(rows)
    print(f"\nwrote {out / TABLE} and plots to {out}/")
    return 0


def print_best(rows: pl.DataFrame) -> None:
    """The best-layer table (dev picks the layer, test metrics shown), the baseline beside it."""
    print("\nBest layer per model (chosen on dev; test UUAS, DSpr., root accuracy, NSpr.):")
    _show(best_layers(rows))


def amnesic(args: argparse.Namespace) -> int:
    """Handler of `lingprobe run amnesic`: UPOS erased at each site against a random erasure."""
    train_file = resolve_file(args.train, data_source(args), what="--train")
    bank = read_treebank(train_file, limit_sentences=args.sentences)
    texts = read_treebank(train_file, skip_sentences=args.sentences, limit_sentences=args.texts)
    subject = load_subject(args.model, head="lm")
    sites = site_rules.select(subject, args.layers)
    out = Path(args.out)
    settings = {"method": args.method, "sentences": args.sentences, "texts": args.texts}
    write_manifest(
        out,
        AMNESIC,
        models=[model_record(subject)],
        data=[dataset_record(str(args.train), [train_file])],
        settings=settings,
    )
    frame = run_amnesic(
        subject,
        bank,
        texts.texts,
        sites,
        method=args.method,
        store=args.store,
        progress=not args.quiet,
    )
    write_table(frame, out / AMNESIC_TABLE)
    finish_manifest(out, AMNESIC)
    print_amnesic(frame)
    print(f"\nwrote {out / AMNESIC_TABLE}")
    return 0


def print_amnesic(frame: pl.DataFrame) -> None:
    """LM loss change per site and eraser (nats per token)."""
    print("\nLM loss (nats/token) with UPOS erased at each site, against a random erasure:")
    _show(frame.select("site_name", "eraser", "rank", "base_loss", "loss", "delta"))


def _show(frame: pl.DataFrame) -> None:
    with pl.Config(tbl_rows=60, tbl_cols=12, fmt_str_lengths=40, tbl_width_chars=200):
        print(frame)


def report(out: Path) -> None:
    """Re-render a folder written by `run structural` or `run amnesic`."""
    suite = read_manifest(out).get("suite")
    if suite == AMNESIC:
        print_amnesic(pl.read_parquet(out / AMNESIC_TABLE))
        return
    if not (out / TABLE).exists():
        raise TaskError(f"{out} has no {TABLE}; run `lingprobe run structural --out {out}` first")
    rows = pl.read_parquet(out / TABLE)
    render_structural(rows, out)
    print_best(rows)


def register(parsers: argparse._SubParsersAction) -> None:
    """Add `lingprobe run structural` and `lingprobe run amnesic`."""
    defaults = StructuralSuiteConfig()
    p = parsers.add_parser(
        "structural",
        help="structural probes: parse-tree distances and depths by layer",
        description="Structural probes (Hewitt & Manning 2019) at every layer: UUAS and DSpr."
        " (distance probe), root accuracy and NSpr. (depth probe), pretrained against random"
        " twin, with the right-branching baseline.",
    )
    p.add_argument("--models", default="minilm", help=MODEL_HELP)
    p.add_argument("--init", default="pretrained,random", help="pretrained, random, or both")
    p.add_argument("--layers", default=defaults.layers, help="all | last | 0,3,6")
    p.add_argument("--train", default=defaults.train_file, help="CoNLL-U file or registry file")
    p.add_argument("--test", default=defaults.test_file, help="CoNLL-U file or registry file")
    p.add_argument("--train-sentences", default=str(defaults.train_sentences))
    p.add_argument("--dev-sentences", default=str(defaults.dev_sentences))
    p.add_argument("--test-sentences", default="none", help="a number, or none for all")
    p.add_argument("--limit-sentences", type=int, default=None, help="cap every file's sentences")
    p.add_argument("--kinds", default=",".join(defaults.kinds), help="distance,depth")
    p.add_argument("--seeds", default="0", help="probe seeds, comma-separated")
    p.add_argument("--ranks", default="full", help="probe ranks; full = the features' width")
    regimen = StructuralConfig()
    p.add_argument("--epochs", default=str(regimen.epochs), help="at most (early stopping)")
    p.add_argument("--lr", default=str(regimen.lr), help="Adam learning rate")
    p.add_argument("--batch-size", default=str(regimen.batch_size), help="sentences per step")
    _common(p)
    p.set_defaults(handler=run)
    a = parsers.add_parser(
        "amnesic",
        help="LM loss with UPOS erased at a site (amnesic probing)",
        description="Amnesic probing (Elazar et al. 2021): erase UPOS (LEACE or INLP) at each"
        " site inside the forward pass and compare the LM loss against a random erasure of the"
        " same rank.",
    )
    a.add_argument("--model", default="smollm2", help="a model with an LM head")
    a.add_argument("--layers", default="6,15,24", help="sites, comma-separated")
    a.add_argument("--method", choices=("leace", "inlp"), default="leace")
    a.add_argument("--train", default="ud-english-ewt:train", help="CoNLL-U file for the eraser")
    a.add_argument("--sentences", type=int, default=1000, help="sentences fitting the eraser")
    a.add_argument("--texts", type=int, default=200, help="next sentences scored for LM loss")
    _common(a)
    a.set_defaults(handler=amnesic)


def _common(parser: argparse.ArgumentParser) -> None:
    add_data_option(parser)
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--store", default=None, help="activation store folder (cache)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
