"""`lingprobe amnesic`: LM loss with UPOS erased at a site (amnesic probing, Elazar et al. 2021).

An eraser (LEACE or INLP) is fitted on UPOS at each site and applied inside the forward pass;
the LM loss on the next sentences is compared against a random erasure of the same rank. Not a
probe unit: it intervenes on one model with an LM head.
"""

from __future__ import annotations

import argparse

import polars as pl

from internals import load_subject
from internals import sites as site_rules
from suites.commands import flags
from suites.datasets import resolve_file
from suites.errors import TaskError
from suites.outputs import finish_manifest, write_manifest, write_table
from suites.provenance import dataset_record, model_record
from suites.structural.amnesic import run_amnesic
from suites.structural.data import read_treebank
from suites.structural.report import show

MANIFEST = "structural-amnesic"
TABLE = "amnesic.parquet"


def run(args: argparse.Namespace) -> int:
    """Handler of `lingprobe amnesic`: UPOS erased at each site against a random erasure."""
    source = flags.data_source(args)
    train_file = resolve_file(args.train_file, source, what="--train-file")
    bank = read_treebank(train_file, limit_sentences=args.sentences)
    texts = read_treebank(train_file, skip_sentences=args.sentences, limit_sentences=args.texts)
    models = flags.csv(args.models)
    if len(models) != 1 or flags.inits(args) != ["pretrained"]:
        raise TaskError(f"--models {args.models!r}: give one pretrained model with an LM head")
    subject = load_subject(models[0], head="lm", device=args.device)
    sites = site_rules.select(subject, args.layers)
    out = flags.out_path(args)
    settings = {"method": args.method, "sentences": args.sentences, "texts": args.texts}
    write_manifest(
        out,
        MANIFEST,
        models=[model_record(subject)],
        data=[dataset_record(str(args.train_file), [train_file])],
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
    write_table(frame, out / TABLE)
    finish_manifest(out, MANIFEST)
    report(out)
    print(f"\nwrote {out / TABLE}")
    return 0


def report(out) -> None:
    """LM loss change per site and eraser (nats per token), from the folder's table."""
    frame = pl.read_parquet(out / TABLE)
    print("\nLM loss (nats/token) with UPOS erased at each site, against a random erasure:")
    show(frame.select("site_name", "eraser", "rank", "base_loss", "loss", "delta"))


def register(parsers: argparse._SubParsersAction) -> None:
    """Add `lingprobe amnesic`."""
    p = parsers.add_parser(
        "amnesic", help="LM loss with UPOS erased at a site (amnesic probing)", description=__doc__
    )
    flags.add_models(p, models="smollm2")
    p.add_argument("--layers", default="6,15,24", help=flags.LAYERS_HELP)
    flags.add_data(p)
    flags.add_output(p)
    p.add_argument("--method", choices=("leace", "inlp"), default="leace")
    p.add_argument(
        "--train-file", default="ud-english-ewt:train", help="CoNLL-U file for the eraser"
    )
    p.add_argument("--sentences", type=int, default=1000, help="sentences fitting the eraser")
    p.add_argument("--texts", type=int, default=200, help="next sentences scored for LM loss")
    p.set_defaults(handler=run)
