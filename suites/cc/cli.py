"""`lingprobe run cc-syntax` and `lingprobe run cc-semantics`: the comparative-correlative suite.

cc-syntax: feature-controlled synthetic subsets D_f (and, with --corpus, user-labelled sentences)
probed at every layer of each model -> layers.parquet, values.parquet, PNGs.
cc-semantics: the calibrated S1-S7 test on each model's LM head -> scores.parquet, table2-5.parquet,
dropped_pairs.parquet, runs.parquet, PNGs. `report(dir)` re-renders either from its parquet.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import polars as pl

from internals import load_subject
from internals.packaged import packaged_path
from internals.transformer_subject import TransformerSubject
from suites.cc import figures, semantic_metrics
from suites.cc.corpus import read_labelled_sentences, split_corpus
from suites.cc.errors import ScoringError
from suites.cc.generate import feature_ranges
from suites.cc.grammar import FEATURES
from suites.cc.head_provenance import untrained_parameters
from suites.cc.lexicon import load_adjective_pairs, load_names
from suites.cc.semantics import SemanticConfig, run_semantic_test
from suites.cc.syntax_probe import SyntaxProbeConfig, probe_feature_subsets, probe_frames
from suites.outputs import read_manifest, write_manifest, write_table

SYNTAX, SEMANTICS = "cc-syntax", "cc-semantics"


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--models",
        required=True,
        type=_csv,
        help="comma-separated model specs (hub id, folder, minilm, smollm2)",
    )
    parser.add_argument(
        "--init",
        choices=("pretrained", "random"),
        default="pretrained",
        help="the models' weights, or their random-init twins",
    )
    parser.add_argument("--out", required=True, type=Path, help="output folder")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def register(parsers: argparse._SubParsersAction) -> None:
    """Add `run cc-syntax` and `run cc-semantics`."""
    syntax = parsers.add_parser(
        SYNTAX,
        help="CC syntax probe (Weissweiler et al. 2022, §3)",
        description="The comparative-correlative syntax probe: feature-controlled synthetic"
        " subsets D_f, a logistic probe per layer (Weissweiler et al. 2022, §3).",
    )
    _common(syntax)
    syntax.add_argument(
        "--n-per-class",
        type=int,
        default=1000,
        help="sentences per class at each feature value (paper: 1000)",
    )
    syntax.add_argument(
        "--features",
        type=_csv,
        default=list(FEATURES),
        help=f"comma-separated subset of {','.join(FEATURES)}",
    )
    syntax.add_argument(
        "--seeds",
        type=lambda s: [int(x) for x in _csv(s)],
        default=[0],
        help="data seeds (each draws fresh subsets)",
    )
    syntax.add_argument(
        "--corpus", type=Path, help="labelled sentences (sentence,label[,pos_pattern])"
    )
    syntax.add_argument(
        "--corpus-test-fraction", type=float, default=0.3, help="share of --corpus held out"
    )
    syntax.add_argument("--store", type=Path, help="activation store folder (cache)")
    syntax.set_defaults(handler=run_syntax)
    semantics = parsers.add_parser(
        SEMANTICS,
        help="CC semantic test with calibration (§4)",
        description="The comparative-correlative semantic test: an LM head's choice between"
        " the two readings, uncalibrated and calibrated (Weissweiler et al. 2022, §4).",
    )
    _common(semantics)
    semantics.add_argument(
        "--n-instances",
        type=int,
        default=SemanticConfig.n_instances,
        help="test instances drawn (pairs x names)",
    )
    semantics.add_argument("--seed", type=int, default=0, help="seed of the instance draw")
    semantics.add_argument(
        "--pairs", type=Path, help="TSV comparative<TAB>antonym (default: shipped)"
    )
    semantics.add_argument("--names", type=Path, help="names, one a line (default: shipped)")
    semantics.add_argument(
        "--causal-score",
        choices=("sentence", "continuation"),
        default="sentence",
        help="decoders: total sentence log-probability (spec §3) or the continuation's",
    )
    semantics.add_argument(
        "--batch-size", type=int, default=SemanticConfig.batch_size, help="sentences per batch"
    )
    semantics.set_defaults(handler=run_semantics)


def run_syntax(args: argparse.Namespace) -> int:
    """Probe every model on D_f (and the corpus, if given); write tables, plots, manifest."""
    unknown = [f for f in args.features if f not in FEATURES]
    if unknown:
        raise ScoringError(f"--features {unknown}: choose among {','.join(FEATURES)}")
    corpus = None
    if args.corpus is not None:
        corpus = split_corpus(read_labelled_sentences(args.corpus), args.corpus_test_fraction)
    args.out.mkdir(parents=True, exist_ok=True)
    layers, values, corpus_layers, corpus_values = [], [], [], []
    config = SyntaxProbeConfig()
    for spec in args.models:
        subject = load_subject(spec, init=args.init)
        per_layer, per_value = probe_feature_subsets(
            subject,
            args.features,
            args.n_per_class,
            args.seeds,
            config=config,
            store=args.store,
            progress=not args.no_progress,
        )
        layers.append(per_layer)
        values.append(per_value)
        if corpus is not None:
            per_layer, per_value = probe_frames(
                subject,
                {"corpus": corpus},
                config=config,
                value_column="length",
                store=args.store,
                progress=not args.no_progress,
            )
            corpus_layers.append(per_layer)
            corpus_values.append(per_value)
    write_table(pl.concat(layers), args.out / "layers.parquet")
    write_table(pl.concat(values), args.out / "values.parquet")
    if corpus is not None:
        write_table(corpus, args.out / "corpus_split.parquet")
        write_table(pl.concat(corpus_layers), args.out / "corpus_layers.parquet")
        write_table(pl.concat(corpus_values), args.out / "corpus_values.parquet")
    ranges = {
        f: {"train": r[0], "test": r[1]} for f, r in feature_ranges().items() if f in args.features
    }
    write_manifest(
        args.out,
        SYNTAX,
        status="done",
        module="cc",
        models=args.models,
        init=args.init,
        n_per_class=args.n_per_class,
        features=args.features,
        seeds=args.seeds,
        feature_values=ranges,
        probe=config.__dict__,
        corpus=str(args.corpus) if args.corpus else None,
    )
    report(args.out)
    return 0


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


def run_semantics(args: argparse.Namespace) -> int:
    """Run the semantic test on every model; write scores, the paper's tables, plots, manifest."""
    args.out.mkdir(parents=True, exist_ok=True)
    config = SemanticConfig(
        n_instances=args.n_instances,
        seed=args.seed,
        causal_score=args.causal_score,
        batch_size=args.batch_size,
    )
    pairs, names = load_adjective_pairs(args.pairs), load_names(args.names)
    scores, dropped, runs = [], [], []
    for spec in args.models:
        subject = load_subject(spec, init=args.init, head="lm")
        if not isinstance(subject, TransformerSubject):
            raise ScoringError(f"{spec!r} is not a transformer LM; the semantic test needs one")
        note = (
            "random init (every weight)"
            if args.init == "random"
            else _head_note(spec, subject.model)
        )
        run = run_semantic_test(
            subject.model,
            subject.tokenizer,
            model_name=subject.name,
            pairs=pairs,
            names=names,
            config=config,
            progress=not args.no_progress,
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
                "kind": run.kind,
                "kept_pairs": run.kept_pairs,
                "conditioned_on": run.conditioned_on,
                "lm_head": note,
            }
        )
    write_table(pl.concat(scores), args.out / "scores.parquet")
    write_table(pl.concat(dropped), args.out / "dropped_pairs.parquet")
    write_table(pl.DataFrame(runs), args.out / "runs.parquet")
    write_manifest(
        args.out,
        SEMANTICS,
        status="done",
        module="cc",
        models=args.models,
        init=args.init,
        config=config.__dict__,
        runs=runs,
    )
    report(args.out)
    return 0


def report(folder: Path) -> None:
    """Re-render a cc-syntax or cc-semantics folder (tables, plots) from its parquet files."""
    folder = Path(folder)
    suite = read_manifest(folder)["suite"]
    if suite == SYNTAX:
        _report_syntax(folder)
    elif suite == SEMANTICS:
        _report_semantics(folder)
    else:
        raise ScoringError(
            f"{folder} holds a {suite!r} run; this report renders {SYNTAX}/{SEMANTICS}"
        )


def _report_syntax(folder: Path) -> None:
    layers = pl.read_parquet(folder / "layers.parquet")
    figures.syntax_figures(layers, pl.read_parquet(folder / "values.parquet"), folder)
    if (folder / "corpus_layers.parquet").exists():
        figures.syntax_figures(
            pl.read_parquet(folder / "corpus_layers.parquet"),
            pl.read_parquet(folder / "corpus_values.parquet"),
            folder,
            "corpus_",
        )
    summary = (
        layers.group_by("model", "init", "feature", "layer")
        .agg(pl.col("accuracy").mean())
        .sort("model", "init", "feature", "layer")
    )
    print("test accuracy per layer (held-apart vocabulary; mean over seeds):")
    for (model, init, feature), rows in summary.group_by(
        "model", "init", "feature", maintain_order=True
    ):
        curve = " ".join(f"{a:.3f}" for a in rows["accuracy"])
        top = rows["layer"].max()
        print(f"  {model!s} ({init!s}), D_{feature!s}, layers 0..{top!s}: {curve}")


def _report_semantics(folder: Path) -> None:
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
