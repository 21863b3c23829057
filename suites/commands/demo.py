"""`lingprobe demo`: the main job on the embedded MiniLM and UD English EWT.

MiniLM and its random twin, UPOS and dependency labels, every layer, with control tasks: the
three tables of the edge-probing paper (heuristics, drops, pretrained vs random) and the plots.
By default it reads the EWT sample shipped with lingprobe (the first 3,000 train and 800 dev
sentences: no download); `--data ud-english-ewt` runs it on the full treebank (fetched once).
Features are cached in the activation store, so a rerun skips the forward passes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from internals import load_subject
from internals import sites as site_rules
from internals.cache_dir import cache_root
from internals.packaged import MINILM
from suites.datasets import DataError, DataSource
from suites.datasets.references import add_trust_local_option
from suites.edge.cli import add_edge_options, config_from, edge_manifest
from suites.edge.conllu import ConlluTask, read_conllu
from suites.edge.experiment import SUITE, EdgeConfig, run_edge
from suites.edge.report import render, save_unit
from suites.html import write_html
from suites.outputs import finish_manifest

TASKS: tuple[ConlluTask, ...] = ("upos", "deprel")
SAMPLE, FULL = "ud-english-ewt-sample", "ud-english-ewt"
FILES = ("en_ewt-ud-train.conllu", "en_ewt-ud-dev.conllu")


def ewt_files(data: str, trust_local: bool = False) -> tuple[Path, Path]:
    """(train, dev) CoNLL-U files: from a registry dataset name, or a folder holding them."""
    if data in (SAMPLE, FULL):
        source = DataSource(trust_local=trust_local)
        return source.path(data, "train"), source.path(data, "dev")
    folder = Path(data).expanduser()
    for candidate in (folder, folder / "ud_english_ewt"):
        if all((candidate / f).is_file() for f in FILES):
            return candidate / FILES[0], candidate / FILES[1]
    raise DataError(
        f"--data {data!r} is neither {SAMPLE!r} (the default, shipped), {FULL!r} (the full"
        f" treebank, fetched once) nor a folder holding {FILES[0]} and {FILES[1]}"
    )


def default_store() -> Path:
    """The activation store the demo uses unless told otherwise (content-keyed, shared)."""
    return cache_root() / "activations"


def run(args: argparse.Namespace) -> int:
    """Handler of `lingprobe demo`: data, settings and models are checked before `--out`."""
    started = time.perf_counter()
    train_path, test_path = ewt_files(args.data, args.trust_local)
    config = config_from(args)
    store = Path(args.store) if args.store else default_store()
    dataset = args.data if args.data in (SAMPLE, FULL) else "ud-english-ewt (local copy)"
    tasks = {
        task: (
            read_conllu(train_path, task, split="train", limit_sentences=args.train_sentences),
            read_conllu(test_path, task, split="test", limit_sentences=args.test_sentences),
        )
        for task in TASKS
    }
    subjects = [load_subject(MINILM, init=init) for init in ("pretrained", "random")]
    chosen = site_rules.select(subjects[0], config.layers)
    out = Path(args.out)
    print(f"lingprobe demo: {MINILM} (pretrained and random twin) on UD English EWT")
    print(f"  data: {dataset} ({train_path.parent})")
    print(
        f"  subsample: the first {args.train_sentences} train sentences and the first"
        f" {args.test_sentences} dev sentences (the test set); pass --train-sentences /"
        " --test-sentences to change it"
    )
    print(f"  activation store: {store} (a rerun skips the forward passes)")
    named = {task: f"{dataset.split(' ')[0].removesuffix('-sample')}:{task}" for task in TASKS}
    edge_manifest(out, subjects, config, dataset, [train_path, test_path], list(named.values()))
    for task, (train, test) in tasks.items():
        train = train.with_frame(train.frame, name=named[task])
        print(
            f"  {named[task]}: {len(train)} train items, {len(test)} test items,"
            f" {len(chosen)} sites x {len(config.grid.seeds)} seeds x"
            f" {' + '.join(config.grid.variants)}"
        )
        results = run_edge(
            subjects, train, test, chosen, config, store=store, progress=not args.quiet
        )
        save_unit(results, out, config.legacy_keys)
    render(out)
    finish_manifest(out, SUITE, seconds=round(time.perf_counter() - started, 1))
    page = write_html(out)
    print(
        f"\nwrote parquet tables and PNG plots to {out}/ in {time.perf_counter() - started:.0f} s"
    )
    print(f"interactive report: {page} ({page.stat().st_size / 1e6:.1f} MB, opens offline)")
    return 0


def register(parsers: argparse._SubParsersAction) -> None:
    """Add `lingprobe demo`."""
    p = parsers.add_parser(
        "demo",
        help="the embedded end-to-end job (MiniLM on UD EWT)",
        description=__doc__,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--out", default="lingprobe-out/demo", help="output folder")
    p.add_argument(
        "--data",
        default=SAMPLE,
        help=f"{SAMPLE} (shipped sample), {FULL} (full treebank, fetched once) or a folder"
        " holding the EWT train and dev files",
    )
    add_trust_local_option(p)
    p.add_argument("--train-sentences", type=int, default=3000, help="train sentences read")
    p.add_argument("--test-sentences", type=int, default=800, help="dev sentences read (the test)")
    add_edge_options(p, EdgeConfig())
    p.set_defaults(handler=run)
