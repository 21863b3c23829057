"""The structural-probe experiment (Hewitt & Manning 2019) on any subjects, every layer at once.

For each subject (e.g. a pretrained encoder and its random twin) the words of train, dev and
test are read at every site in one extraction, and all (site, seed, rank) distance probes, then
all depth probes, train in one batched optimisation each (with a store and a memory budget, one
per group of sites that fits the budget, from the store's `FeatureSet`). The paper's LINEAR baseline
(right-branching trees) is scored on the same sentences. The rows come back in the one results
schema (`suites.schema`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path

import polars as pl
import torch
from torch import Tensor

from internals import FeatureSet, Site, SpanItem, Subject
from internals import sites as site_rules
from lingprobe.heap import release_memory
from probes.structural import (
    SentenceTrees,
    StructuralGrid,
    StructuralKind,
    fit_structural_probes,
    right_branching,
    score_sentences,
)
from suites.schema import BASELINE_INIT, conform, site_columns, subject_rows
from suites.structural.config import StructuralSuiteConfig
from suites.structural.data import Treebank, concatenate

SUITE = "structural"
BASELINE = "right_branching"
SPLITS = {1: "dev", 2: "test"}
PHENOMENA = {"distance": "syntactic distance", "depth": "syntactic depth"}


def task_label(dataset: str, kind: str) -> str:
    """The task column of a kind's rows: `ud-english-ewt:distance` (or `distance`)."""
    return f"{dataset}:{kind}" if dataset else kind


def rank_variant(rank: pl.Expr, width: int) -> pl.Expr:
    """The variant column of a probe's rows: "task" at full rank (the features' `width`), else
    `rank:<r>`."""
    full = rank.is_null() | (rank == width)
    return pl.when(full).then(pl.lit("task")).otherwise(pl.format("rank:{}", rank))


def subject_scores(
    subject: Subject,
    items: Sequence[SpanItem],
    trees: SentenceTrees,
    codes: torch.Tensor,
    sites: Sequence[Site] | None,
    config: StructuralSuiteConfig,
    *,
    dataset: str = "",
    store: str | Path | None = None,
    progress: bool = True,
) -> pl.DataFrame:
    """Every probe of every kind on one subject's word features, as results-schema rows.

    With a `store` and `config.structural.memory`, the features stay on disk: extracted lazily
    (one window of shards held) and read by the probes as a `FeatureSet`, a group of sites within
    the budget at a time; the rows equal those of the features held in memory."""
    chosen = list(sites) if sites is not None else site_rules.every_layer(subject)
    feats: Tensor | FeatureSet
    if store is not None and config.structural.memory is not None:
        feats = subject.features(
            items, chosen, pool=config.pool, store=store, progress=progress, lazy=True
        )
    else:
        feats = subject.features(items, chosen, pool=config.pool, store=store, progress=progress)
    grid = StructuralGrid(seeds=config.seeds, ranks=config.ranks)
    names = site_columns(chosen)
    parts = []
    for kind in config.kinds:
        results = fit_structural_probes(
            feats, trees, codes, kind, grid, config.structural, progress=progress
        )
        table = results.table().join(names, left_on="site", right_on="site_index")
        parts.append(
            table.select(
                "layer",
                "seed",
                "split",
                "metric",
                "value",
                site="site_right",
                variant=rank_variant(pl.col("rank"), feats.shape[-1]),
                task=pl.lit(task_label(dataset, kind)),
                phenomenon=pl.lit(PHENOMENA[kind]),
            )
        )
    fixed = {"phenomenon_type": "syntax", "mask": 1.0}
    return subject_rows(pl.concat(parts), subject, SUITE, labels=fixed)


def baseline_scores(
    trees: SentenceTrees,
    codes: torch.Tensor,
    kinds: Sequence[StructuralKind],
    dataset: str = "",
) -> pl.DataFrame:
    """The right-branching baseline's metrics on dev and test, one row per metric (model
    "right_branching", init "baseline", no site, layer or seed)."""
    rows: list[dict[str, object]] = []
    for kind in kinds:
        predict = partial(right_branching, kind=kind)
        for code, split in SPLITS.items():
            chosen = (codes == code).nonzero().flatten()
            if len(chosen) == 0:
                continue
            scores = score_sentences(predict, trees, chosen, kind, 1)
            rows += [
                {
                    "task": task_label(dataset, kind),
                    "phenomenon": PHENOMENA[kind],
                    "split": split,
                    "metric": metric,
                    "value": float(value[0]),
                }
                for metric, value in scores.items()
            ]
    labels = {"model": BASELINE, "init": BASELINE_INIT, "suite": SUITE, "phenomenon_type": "syntax"}
    nulls = {"site": None, "layer": None, "seed": None, "variant": "task", "mask": 1.0}
    return conform(pl.DataFrame(rows), **labels, **nulls, unit="")


def run_structural(
    subjects: Sequence[Subject],
    train: Treebank,
    dev: Treebank,
    test: Treebank,
    sites: Sequence[Site] | None = None,
    config: StructuralSuiteConfig | None = None,
    *,
    dataset: str = "",
    store: str | Path | None = None,
    progress: bool = True,
) -> pl.DataFrame:
    """Distance and depth probes of every subject at `sites` (default: every layer), and the
    right-branching baseline; trained on `train`, regimen on `dev`, reported on dev and test.

    Rows in `suites.schema.RESULTS_SCHEMA`: task `<dataset>:distance|depth`, variant "task"
    (full rank) or `rank:<r>`, metrics uuas, dspr (distance) and root_acc, nspr (depth).

    Examples:
        >>> from internals import load_subject
        >>> from probes.structural import StructuralConfig
        >>> from suites.datasets import DataSource
        >>> from suites.structural import read_treebank
        >>> ewt = DataSource(samples=True)
        >>> path = ewt.path("ud-english-ewt", "train")
        >>> train = read_treebank(path, limit_sentences=20)
        >>> dev = read_treebank(path, skip_sentences=20, limit_sentences=5)
        >>> test = read_treebank(ewt.path("ud-english-ewt", "dev"), limit_sentences=10)
        >>> config = StructuralSuiteConfig(structural=StructuralConfig(epochs=2))
        >>> glove = load_subject("glove:6B.50d")
        >>> rows = run_structural([glove], train, dev, test, config=config, progress=False)
        >>> sorted(rows["metric"].unique()), sorted(rows["init"].unique())
        (['dspr', 'nspr', 'root_acc', 'uuas'], ['baseline', 'pretrained'])
    """
    config = config or StructuralSuiteConfig()
    items, trees, codes = concatenate(train, dev, test)
    frames = []
    for subject in subjects:
        frames.append(
            subject_scores(
                subject,
                items,
                trees,
                codes,
                sites,
                config,
                dataset=dataset,
                store=store,
                progress=progress,
            )
        )
        release_memory()  # one subject's features at a time
    frames.append(baseline_scores(trees, codes, config.kinds, dataset))
    return pl.concat(frames)
