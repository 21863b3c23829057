"""The structural-probe experiment (Hewitt & Manning 2019) on any subjects, every layer at once.

For each subject (e.g. a pretrained encoder and its random twin) the words of train, dev and
test are read at every site in one extraction, and all (site, seed, rank) distance probes, then
all depth probes, train in one batched optimisation each. The paper's LINEAR baseline
(right-branching trees) is scored on the same sentences. One tidy frame comes back: model,
init, task (distance | depth), site_name, layer, seed, rank, split, metric, value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import polars as pl
import torch

from internals import Site, SpanItem, Subject
from internals import sites as site_rules
from internals.pool import PoolHow
from probes import (
    SentenceTrees,
    StructuralConfig,
    StructuralGrid,
    fit_structural_probes,
    right_branching,
    score_sentences,
)
from probes.structural_metrics import StructuralKind
from suites.structural.data import Treebank, concatenate

BASELINE = "right_branching"
SPLITS = {1: "dev", 2: "test"}
COLUMNS = ["model", "init", "task", "site_name", "layer", "seed", "rank", "split", "metric"]
SCHEMA = pl.Schema(
    {
        "model": pl.Utf8,
        "init": pl.Utf8,
        "task": pl.Utf8,
        "site_name": pl.Utf8,
        "layer": pl.Int64,
        "seed": pl.Int64,
        "rank": pl.Int64,
        "split": pl.Utf8,
        "metric": pl.Utf8,
        "value": pl.Float64,
    }
)


@dataclass(frozen=True)
class StructuralSuiteConfig:
    """What the suite trains; the probes' regimen is `probe` (the reference's defaults)."""

    kinds: tuple[StructuralKind, ...] = ("distance", "depth")
    seeds: tuple[int, ...] = (0,)  # the paper reports one probe per layer
    ranks: tuple[int | None, ...] = (None,)  # naacl19 BERT configs: maximum_rank = hidden size
    probe: StructuralConfig = field(default_factory=StructuralConfig)
    pool: PoolHow = "mean"  # data.py BERTDataset: a word is the mean of its subword vectors


def subject_scores(
    subject: Subject,
    items: Sequence[SpanItem],
    trees: SentenceTrees,
    codes: torch.Tensor,
    sites: Sequence[Site] | None,
    config: StructuralSuiteConfig,
    *,
    store: str | Path | None = None,
    progress: bool = True,
) -> pl.DataFrame:
    """Every probe of every kind on one subject's word features."""
    chosen = list(sites) if sites is not None else site_rules.every_layer(subject)
    feats = subject.features(items, chosen, pool=config.pool, store=store, progress=progress)
    grid = StructuralGrid(seeds=config.seeds, ranks=config.ranks)
    names = pl.DataFrame(
        {
            "site": list(range(len(chosen))),
            "site_name": [s.name for s in chosen],
            "layer": [s.layer for s in chosen],
        },
        schema={"site": pl.Int64, "site_name": pl.Utf8, "layer": pl.Int64},
    )
    parts = []
    for kind in config.kinds:
        results = fit_structural_probes(
            feats, trees, codes, kind, grid, config.probe, progress=progress
        )
        parts.append(results.table().join(names, on="site").with_columns(task=pl.lit(kind)))
    return (
        pl.concat(parts)
        .with_columns(model=pl.lit(subject.name), init=pl.lit(subject.init))
        .select(*COLUMNS, "value")
        .cast(SCHEMA)
    )


def baseline_scores(
    trees: SentenceTrees, codes: torch.Tensor, kinds: Sequence[StructuralKind]
) -> pl.DataFrame:
    """The right-branching baseline's metrics on dev and test, one row per metric."""
    rows: list[tuple] = []
    for kind in kinds:
        predict = partial(right_branching, kind=kind)
        for code, split in SPLITS.items():
            chosen = (codes == code).nonzero().flatten()
            if len(chosen) == 0:
                continue
            scores = score_sentences(predict, trees, chosen, kind, 1)
            nulls = (None, None, None, None)  # no site, layer, seed or rank
            rows += [
                (BASELINE, "baseline", kind, *nulls, split, metric, float(value[0]))
                for metric, value in scores.items()
            ]
    return pl.DataFrame(rows, schema=SCHEMA, orient="row")


def run_structural(
    subjects: Sequence[Subject],
    train: Treebank,
    dev: Treebank,
    test: Treebank,
    sites: Sequence[Site] | None = None,
    config: StructuralSuiteConfig | None = None,
    *,
    store: str | Path | None = None,
    progress: bool = True,
) -> pl.DataFrame:
    """Distance and depth probes of every subject at `sites` (default: every layer), and the
    right-branching baseline; trained on `train`, regimen on `dev`, reported on dev and test."""
    config = config or StructuralSuiteConfig()
    items, trees, codes = concatenate(train, dev, test)
    frames = [
        subject_scores(s, items, trees, codes, sites, config, store=store, progress=progress)
        for s in subjects
    ]
    frames.append(baseline_scores(trees, codes, config.kinds))
    return pl.concat(frames)
