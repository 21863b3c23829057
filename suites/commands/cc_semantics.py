"""`lingprobe cc-semantics`: the calibrated comparative-correlative semantic test (Weissweiler
et al. 2022, §4).

Each model's LM head chooses between the two readings of S1-S7 sentences, uncalibrated and
calibrated: scores.parquet, table2-5.parquet, dropped_pairs.parquet, runs.parquet and plots. Not
a probe unit: it scores an LM head, no probes are trained (`lingprobe run cc` is the syntax
probe).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl

from internals import TransformerSubject, load_subject, packaged_path
from suites.cc import figures, semantic_metrics
from suites.cc.errors import ScoringError
from suites.cc.head_provenance import untrained_parameters
from suites.cc.lexicon import load_adjective_pairs, load_names
from suites.cc.semantics import SemanticConfig, run_semantic_test
from suites.commands import flags
from suites.outputs import write_manifest, write_table

MANIFEST = "cc-semantics"


def _head_note(spec: str, model) -> str:
    folder = packaged_path(spec) or (Path(spec) if Path(spec).is_dir() else None)
    missing = untrained_parameters(model, folder) if folder is not None else None
    if missing is None:
        return "unknown (no local checkpoint to compare with)"
    if not missing:
        return "pretrained (every parameter is in the checkpoint)"
    return (
        f"randomly initialised: {len(missing)} parameters not in the checkpoint, e.g. {missing[0]}"
    )


def run(args: argparse.Namespace) -> int:
    """Run the semantic test on every model; write scores, the paper's tables, plots, manifest."""
    out = flags.out_path(args)
    out.mkdir(parents=True, exist_ok=True)
    config = SemanticConfig(
        n_instances=args.n_instances,
        seed=args.seed,
        causal_score=args.causal_score,
        batch_size=args.batch_size,
    )
    pairs, names = load_adjective_pairs(args.pairs), load_names(args.names)
    models, inits = flags.csv(args.models), flags.inits(args)
    scores, dropped, runs = [], [], []
    for spec in models:
        for init in inits:
            subject = load_subject(spec, init=init, head="lm", device=args.device)
            if not isinstance(subject, TransformerSubject):
                raise ScoringError(f"{spec!r} is not a transformer LM; the semantic test needs one")
            note = (
                "random init (every weight)"
                if init == "random"
                else _head_note(spec, subject.model)
            )
            run = run_semantic_test(
                subject.model,
                subject.tokenizer,
                model_name=subject.name,
                pairs=pairs,
                names=names,
                config=config,
                progress=not args.quiet,
            )
            print(
                f"{subject.name}: {run.kind} LM, {run.kept_pairs} single-token pairs kept,"
                f" {run.dropped_pairs.height} dropped; LM head: {note}"
            )
            scores.append(run.scores)
            dropped.append(run.dropped_pairs.with_columns(pl.lit(run.model).alias("model")))
            runs.append(
                {
                    "model": run.model,
                    "init": init,
                    "kind": run.kind,
                    "kept_pairs": run.kept_pairs,
                    "conditioned_on": run.conditioned_on,
                    "lm_head": note,
                }
            )
    write_table(pl.concat(scores), out / "scores.parquet")
    write_table(pl.concat(dropped), out / "dropped_pairs.parquet")
    write_table(pl.DataFrame(runs), out / "runs.parquet")
    write_manifest(
        out,
        MANIFEST,
        status="done",
        module="cc",
        models=models,
        init=inits,
        config=config.__dict__,
        runs=runs,
    )
    report(out)
    return 0


def report(folder: Path) -> None:
    """The paper's tables 2-5 and plots of a cc-semantics folder, from its scores."""
    scores = pl.read_parquet(folder / "scores.parquet")
    tables = {
        "table2": semantic_metrics.table2(scores),
        "table3": semantic_metrics.table3(scores),
        "table4": semantic_metrics.table4(scores),
        "table5": semantic_metrics.table5(scores),
    }
    for name, table in tables.items():
        write_table(table, folder / f"{name}.parquet")
    figures.semantic_figures(semantic_metrics.accuracies(scores), folder)
    runs = pl.read_parquet(folder / "runs.parquet") if (folder / "runs.parquet").exists() else None
    with pl.Config(
        tbl_rows=-1, tbl_cols=-1, float_precision=3, fmt_str_lengths=60, tbl_width_chars=250
    ):
        if runs is not None:
            print(runs)
        print("Table 2 (accuracy S1/S2, decision flips S1->S2/S3/S4):")
        print(tables["table2"])
        print("Table 4 (accuracy by calibration):")
        print(tables["table4"])
        print("Table 5 (decision flips by calibration):")
        print(tables["table5"])


def register(parsers: argparse._SubParsersAction) -> None:
    """Add `lingprobe cc-semantics`."""
    p = parsers.add_parser(
        "cc-semantics", help="CC semantic test with calibration (§4)", description=__doc__
    )
    flags.add_models(p, models="smollm2")
    flags.add_output(p, store=False)
    p.add_argument(
        "--n-instances",
        type=int,
        default=SemanticConfig.n_instances,
        help="test instances drawn (pairs x names)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the instance draw")
    p.add_argument("--pairs", type=Path, help="TSV comparative<TAB>antonym (default: shipped)")
    p.add_argument("--names", type=Path, help="names, one a line (default: shipped)")
    p.add_argument(
        "--causal-score",
        choices=("sentence", "continuation"),
        default="sentence",
        help="decoders: total sentence log-probability (spec §3) or the continuation's",
    )
    p.add_argument(
        "--batch-size", type=int, default=SemanticConfig.batch_size, help="sentences per batch"
    )
    p.set_defaults(handler=run)
