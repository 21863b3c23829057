"""A whole curriculum run: every analysis on every phenomenon, tables written as they finish.

Folder layout: `manifest.json`; `zero_shot.parquet`; per phenomenon `<name>/inoculation.parquet`
(pair, hypothesis-only and fine-tuning rows), `<name>/pvi.parquet`,
`<name>/cross_distribution.parquet`; the summaries and plots come from `summarise` (also run
by `lingprobe report`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import polars as pl

from internals import Site, Subject
from suites.curriculum.config import ANALYSES, PROBE_ANALYSES, CurriculumConfig
from suites.curriculum.cross_distribution import cross_distribution
from suites.curriculum.features import nli_features
from suites.curriculum.finetune import FineTuneConfig, finetune_inoculation
from suites.curriculum.inoculation import inoculation
from suites.curriculum.labels import model_labels
from suites.curriculum.pvi import pvi_scores
from suites.curriculum.stored_features import PairFeatures, nli_feature_set
from suites.curriculum.zero_shot import resolve_nli_model, zero_shot
from suites.outputs import finish_manifest, write_manifest, write_table
from suites.provenance import model_record, task_record
from suites.tasks import Task, TaskError

SUITE = "curriculum"
DEFAULT_ANALYSES = PROBE_ANALYSES


def check_analyses(analyses: Sequence[str]) -> tuple[str, ...]:
    """The analyses in run order; `cross-distribution` brings `pvi` with it."""
    unknown = [a for a in analyses if a not in ANALYSES]
    if unknown or not analyses:
        raise TaskError(f"analyses {unknown or '[]'} unknown; choose from {list(ANALYSES)}")
    chosen = set(analyses) | ({"pvi"} if "cross-distribution" in analyses else set())
    return tuple(a for a in ANALYSES if a in chosen)


def run_curriculum(
    tasks: Mapping[str, Task],
    out: str | Path,
    *,
    subject: Subject | None = None,
    sites: Sequence[Site] | None = None,
    nli_model: Any | None = None,
    tokenizer: Any | None = None,
    label_order: Sequence[str] | None = None,
    analyses: Sequence[str] = DEFAULT_ANALYSES,
    config: CurriculumConfig | None = None,
    finetune: FineTuneConfig | None = None,
    store: str | Path | None = None,
    progress: bool = True,
) -> Path:
    """Run the chosen analyses and write their tables under `out`; returns `out`.

    Probe analyses read `subject`'s features at `sites` (default every layer); `zero-shot` and
    `finetune` need `nli_model` (an HF sequence-classification model with `tokenizer`, or a
    subject loaded with `head="sequence-classification"`). With a `store` and
    `config.train.memory`, the features stay in the store (`nli_feature_set`) and every probe
    analysis reads them by groups of sites within the budget, with the tables of the run that
    holds them in memory; a budget without a store is refused.
    """
    config = config or CurriculumConfig()
    chosen = check_analyses(analyses)
    budget = config.train.memory_bytes
    if budget is not None and store is None:
        raise TaskError(
            f"CurriculumConfig.train.memory={config.train.memory!r} bounds the features kept in"
            " a store; give a store (store=DIR, --store DIR, a sweep's `store`) or leave out"
            " memory"
        )
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    wants_probes = any(a in PROBE_ANALYSES for a in chosen)
    if wants_probes and subject is None:
        raise TaskError(f"analyses {list(chosen)} need a subject for features; load one")
    if {"zero-shot", "finetune"} & set(chosen):
        if nli_model is None:
            raise TaskError("zero-shot and finetune need an NLI model with a classification head")
        nli_model, tokenizer = resolve_nli_model(nli_model, tokenizer)
    write_manifest(
        folder,
        SUITE,
        model=getattr(subject, "name", None),
        models=[model_record(subject)] if subject is not None else [],
        nli_model=getattr(getattr(nli_model, "config", None), "_name_or_path", None),
        init=getattr(subject, "init", None),
        phenomena=list(tasks),
        analyses=list(chosen),
        config=asdict(config),
        finetune=asdict(finetune or FineTuneConfig()) if "finetune" in chosen else None,
        sites=[s.name for s in sites] if sites is not None else "all",
    )
    if "zero-shot" in chosen:
        table = zero_shot(
            nli_model, tasks, tokenizer=tokenizer, label_order=label_order, progress=progress
        )
        write_table(table, folder / "zero_shot.parquet")
    for name, task in tasks.items():
        target = folder / name
        target.mkdir(exist_ok=True)
        curves = []
        if subject is not None and wants_probes:
            feats: PairFeatures
            if store is not None and budget is not None:
                feats = nli_feature_set(
                    subject, task, sites, store=store, memory=budget, progress=progress
                )
            else:
                feats = nli_features(subject, task, sites, store=store, progress=progress)
            curves += _probe_analyses(task, feats, chosen, config, target, progress)
        if "finetune" in chosen and nli_model is not None:
            labels = model_labels(getattr(nli_model.config, "id2label", None), label_order)
            curves.append(
                finetune_inoculation(
                    nli_model, tokenizer, task, labels, config, finetune, progress=progress
                )
            )
        if curves:
            write_table(pl.concat(curves, how="diagonal"), target / "inoculation.parquet")
    finish_manifest(folder, SUITE, data=[task_record(t) for t in tasks.values()])
    return folder


def _probe_analyses(
    task: Task,
    feats: PairFeatures,
    chosen: tuple[str, ...],
    config: CurriculumConfig,
    target: Path,
    progress: bool,
) -> list[pl.DataFrame]:
    """Inoculation / hypothesis-only curves (returned), PVI and cross-distribution (written)."""
    inputs = [
        i for a, i in (("inoculation", "pair"), ("hypothesis-only", "hypothesis")) if a in chosen
    ]
    curves = [inoculation(task, feats, config, inputs=inputs, progress=progress)] if inputs else []
    if "pvi" in chosen:
        pvi = pvi_scores(task, feats, config, progress=progress)
        write_table(pvi, target / "pvi.parquet")
        if "cross-distribution" in chosen:
            cross = cross_distribution(task, feats, pvi, config, progress=progress)
            write_table(cross, target / "cross_distribution.parquet")
    return curves
