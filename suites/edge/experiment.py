"""The paper's experiments: original vs heuristically filtered test sets, pretrained vs random.

For each subject (a pretrained encoder and its random twin), one probe grid (sites x seeds x
task/control) is trained on the train split; its predictions on the test split are scored on the
original test set and on each heuristic's filtered set (the items that heuristic cannot classify).
Tables: heuristic accuracies (paper Table 2), drops %Δ = (acc_original − acc_filtered) × 100 /
acc_original (Tables 3–4), pretrained vs random on the Mem-Exact-filtered set (Tables 5–6).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import ClassVar, Literal

import polars as pl
import torch
from torch import Tensor

from internals import FeatureSet, Site, Subject
from lingprobe.heap import release_memory
from probes import ProbeGrid, TrainConfig, classification_metrics, multilabel_metrics
from suites.edge.heuristics import HEURISTICS, accuracy_table, classify
from suites.edge.intervals import (
    ScoredSet,
    compare_inits,
    subject_intervals,
    test_sets,
    twins,
)
from suites.edge.readers import FIXED_TASKS, edge_task
from suites.probing import probe_task, task_feature_set, task_features
from suites.schema import site_columns, subject_rows
from suites.suite import Limits
from suites.tasks import Task

ORIGINAL = "original"
SUITE = "edge"
EDGE_TASKS = FIXED_TASKS  # and conllu:feats:<Feature> (`suites.edge.readers.edge_task`)


def _paper_grid() -> ProbeGrid:
    # Sahu et al. §4.1: 3 probes per encoder and classifier; §2.1 linear (or MLP, 1024 hidden);
    # the control task of Hewitt & Liang (2019) for selectivity.
    return ProbeGrid(seeds=(0, 1, 2), control=True, kind="linear")


def _paper_train() -> TrainConfig:
    # Sahu et al. §2.1: dropout 0.1; epochs, batch size and learning rate as Holmes App. A.2.
    return TrainConfig(dropout=0.1)


@dataclass(frozen=True)
class EdgeConfig:
    """An edge-probing run: probe settings (`grid`, `train`), the paper's options, the data.

    Defaults follow Sahu et al. where they say. `task`, `train_file`, `test_file` (paths or
    registry references such as `ud-english-ewt:train`), `name`, `layers` and `limits` say what
    the suite runs on (the CLI and sweeps); `run_edge` takes the tasks themselves.
    """

    probe_fields: ClassVar[tuple[str, ...]] = ("grid", "train")

    grid: ProbeGrid = field(default_factory=_paper_grid)
    train: TrainConfig = field(default_factory=_paper_train)
    pair_pooling: Literal["mean", "concat"] = "mean"  # paper §2.1: span pairs averaged
    heuristic_seed: int = 0
    legacy_keys: bool = False
    dev_fraction: float = 0.1  # paper §2.2: 10% of train as dev where none is given
    balance_binary: bool = False  # paper §4.2: optional re-balancing of skewed binary tasks
    task: str = "conllu:upos"  # one of EDGE_TASKS, or conllu:feats:<Feature> (e.g. feats:Case)
    train_file: str = "ud-english-ewt:train"
    test_file: str = "ud-english-ewt:dev"  # EWT dev as the test set, as the edge-probing demo
    name: str | None = None  # the task's name in tables (default: dataset and task)
    layers: str = "all"  # edge probing reads every layer (Sahu et al.)
    limits: Limits = field(default_factory=Limits)  # `sentences` caps each file
    ci: float | None = 0.95  # bootstrap intervals and paired tests of the tables (None: none)
    n_resamples: int = 1000  # bootstrap resamples and permutations (seeded by heuristic_seed)

    def __post_init__(self) -> None:
        edge_task(self.task)  # one of EDGE_TASKS or conllu:feats:<Feature>, else a clear error


@dataclass
class EdgeResults:
    """Everything one edge run produced, as polars frames.

    `scores` is in `suites.schema.RESULTS_SCHEMA`: split "test" is the original test set and
    "test:<heuristic>" each heuristic's filtered set.
    """

    heuristics: pl.DataFrame
    scores: pl.DataFrame
    meta: dict = field(default_factory=dict)
    intervals: pl.DataFrame = field(default_factory=pl.DataFrame)  # `edge.intervals`
    comparisons: pl.DataFrame = field(default_factory=pl.DataFrame)  # pretrained vs random
    scored: list[dict[str, ScoredSet]] = field(default_factory=list, repr=False)  # per subject
    sites: tuple[Site, ...] = ()  # the sites probed

    def drops(self) -> pl.DataFrame:
        """Tables 3–4: per model/init/site, accuracy on original and filtered sets and %Δ."""
        return drop_table(self.scores)

    def pretrained_vs_random(self, test_set: str = "mem_exact") -> pl.DataFrame:
        """Tables 5–6: task accuracy on one filtered test set, pretrained next to random."""
        return pretrained_vs_random(self.scores, test_set)


def prepare(train: Task, test: Task, config: EdgeConfig) -> Task:
    """Train (+ carved dev) and test in one task; test items with unseen labels are dropped."""
    seen = set(train.labels)
    if test.target_type == "classification":
        test = test.with_frame(test.frame.filter(pl.col("label").is_in(sorted(seen))))
    task = Task.combine(train, test).carve_dev(config.dev_fraction, config.heuristic_seed)
    if config.balance_binary and task.target_type == "classification" and len(task.labels) == 2:
        task = _balance_test(task, config.heuristic_seed)
    return task


def _balance_test(task: Task, seed: int) -> Task:
    test = task.split("test")
    smallest = int(test.group_by("label").len()["len"].min() or 0)  # type: ignore[arg-type]
    balanced = pl.concat(
        group.sample(n=smallest, seed=seed, shuffle=True)
        for _, group in test.group_by("label", maintain_order=True)
    )
    return task.with_frame(pl.concat([task.frame.filter(pl.col("split") != "test"), balanced]))


def _pair_mean(feats: Tensor, dim: int) -> Tensor:
    segments = feats.shape[-1] // dim
    if segments == 1:
        return feats
    return feats.view(*feats.shape[:-1], segments, dim).mean(-2)


def score_subject(
    subject: Subject,
    task: Task,
    marked_test: pl.DataFrame,
    sites: Sequence[Site] | None,
    config: EdgeConfig,
    *,
    store: str | Path | None = None,
    store_dtype: torch.dtype | None = None,
    progress: bool = True,
) -> tuple[pl.DataFrame, dict[str, ScoredSet], tuple[Site, ...]]:
    """Fit the grid on `subject`'s features; score every probe on original and filtered tests.
    Returns the rows, the probes' predictions on each test set and the sites.

    Features stay in `store_dtype` (default float32) until a minibatch needs them. With a
    `store` and `config.train.memory`, they stay on disk: a `FeatureSet` read by groups of sites
    within the budget (`suites.probing.task_feature_set`)."""
    reduce = partial(_pair_mean, dim=subject.dim) if config.pair_pooling == "mean" else None
    if reduce is not None and max(len(item.spans) for item in task.items()) <= 1:
        reduce = None  # one span per item: the mean of one segment is the segment
    feats: Tensor | FeatureSet
    if store is not None and config.train.memory is not None:
        feats = task_feature_set(
            subject, task, sites, store=store, store_dtype=store_dtype, reduce=reduce,
            memory=config.train.memory_bytes, progress=progress,
        )  # fmt: skip
    else:
        feats = task_features(
            subject, task, sites, store=store, store_dtype=store_dtype, reduce=reduce,
            progress=progress,
        )  # fmt: skip
    run = probe_task(
        subject,
        task,
        sites,
        grid=config.grid,
        config=config.train,
        features=feats,
        progress=progress,
    )
    test_rows = torch.nonzero(task.splits == 2).squeeze(1)
    kept = run.results.test  # the fit's own test predictions: no second pass over the features
    if kept is not None and torch.equal(kept.items, test_rows):
        predictions = kept.pred.long() if task.target_type == "classification" else kept.pred
    else:
        test_feats = feats.read(items=test_rows) if isinstance(feats, FeatureSet) else feats
        which = None if isinstance(feats, FeatureSet) else test_rows
        predictions = run.results.predict(test_feats, which)
    del feats  # one subject's features at a time (see run_edge)
    truth = task.targets[test_rows]
    subsets = {ORIGINAL: torch.ones(len(test_rows), dtype=torch.bool)}
    subsets |= {h: ~torch.tensor(marked_test[h].to_list()) for h in HEURISTICS}
    probes = run.results.probes
    rows = []
    for name, keep in subsets.items():
        include = keep.expand(predictions.shape[0], -1)
        if task.target_type == "multilabel":
            scores = multilabel_metrics(predictions, truth.bool().expand_as(predictions), include)
            metric, values = "micro_f1", scores["micro_f1"]
        else:
            scores = classification_metrics(
                predictions, truth.expand(predictions.shape[0], -1), task.num_classes, include
            )
            metric, values = "accuracy", scores["accuracy"]
        rows.append(
            probes.with_columns(
                split=pl.lit("test" if name == ORIGINAL else f"test:{name}"),
                metric=pl.lit(metric),
                value=pl.Series(values.tolist()),
            )
        )
    sites_used = run.sites
    names = pl.DataFrame(
        {
            "site_index": list(range(len(sites_used))),
            "site_name": [s.name for s in sites_used],
            "layer": [s.layer for s in sites_used],
        }
    )
    frame = (
        pl.concat(rows)
        .rename({"site": "site_index"})
        .join(names, on="site_index")
        .select(
            "seed",
            "variant",
            "mask",
            "split",
            "metric",
            "value",
            "layer",
            site="site_name",
        )
    )
    sets = test_sets(run.results, subsets)
    return subject_rows(frame, subject, SUITE, task), sets, tuple(run.sites)


def run_edge(
    subjects: Sequence[Subject],
    train: Task,
    test: Task,
    sites: Sequence[Site] | None = None,
    config: EdgeConfig | None = None,
    *,
    store: str | Path | None = None,
    store_dtype: torch.dtype | None = None,
    progress: bool = True,
) -> EdgeResults:
    """Heuristics of the data, then every subject's probes on original and filtered test sets.

    Subjects run one after the other, and a subject's features are freed (a garbage
    collection included, for reference cycles a backend may leave) before the next subject's
    extraction, so memory holds one subject's features at a time.

    Examples:
        >>> from internals import load_subject
        >>> from suites.datasets import DataSource
        >>> from suites.edge import read_conllu
        >>> from suites.suite import with_probe
        >>> ewt = DataSource(samples=True)
        >>> train = read_conllu(ewt.path("ud-english-ewt", "train"), "upos", limit_sentences=40)
        >>> dev = ewt.path("ud-english-ewt", "dev")
        >>> test = read_conllu(dev, "upos", split="test", limit_sentences=10)
        >>> config = with_probe(EdgeConfig(ci=None), seeds=(0,), epochs=2)
        >>> glove = load_subject("glove:6B.50d")
        >>> results = run_edge([glove], train, test, config=config, progress=False)
        >>> results.heuristics["heuristic"].to_list()
        ['mem_exact', 'mem_freq', 'mem_uniform']
        >>> sorted(results.scores["split"].unique())  # the original and each filtered test set
        ['test', 'test:mem_exact', 'test:mem_freq', 'test:mem_uniform']
    """
    config = config or EdgeConfig()
    task = prepare(train, test, config)
    train_part = task.with_frame(task.frame.filter(pl.col("split") != "test"))
    test_part = task.with_frame(task.split("test"))
    marked = classify(
        train_part, test_part, seed=config.heuristic_seed, legacy_keys=config.legacy_keys
    )
    table = accuracy_table(marked).with_columns(task=pl.lit(task.name))
    per_subject, sets = [], []
    used: tuple[Site, ...] = ()
    for subject in subjects:
        rows, scored, used = score_subject(
            subject,
            task,
            marked,
            sites,
            config,
            store=store,
            store_dtype=store_dtype,
            progress=progress,
        )
        per_subject.append(rows)
        sets.append(scored)
        release_memory()  # one subject's features at a time
    scores = pl.concat(per_subject)
    intervals, comparisons = _uncertainty(subjects, task, sets, used, config)
    release_memory()  # the bootstrap's working blocks, before the next task's features
    meta = {"task": task.name, "items": task.frame.height, "metric": _metric(task)}
    return EdgeResults(table, scores, meta, intervals, comparisons, sets, used)


def _uncertainty(
    subjects: Sequence[Subject],
    task: Task,
    sets: list[dict[str, ScoredSet]],
    sites: Sequence[Site],
    config: EdgeConfig,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Every subject's score intervals, and pretrained minus random for each twin pair."""
    if config.ci is None or not sites:
        return pl.DataFrame(), pl.DataFrame()
    metric = _metric(task)
    ci, n, seed = config.ci, config.n_resamples, config.heuristic_seed
    intervals = [
        subject_intervals(s, task.name, scored, sites, metric, ci=ci, n_resamples=n, seed=seed)
        for s, scored in zip(subjects, sets)
    ]
    comparisons = [
        compare_inits(
            subjects[p].name,
            task.name,
            sets[p],
            sets[r],
            site_columns(sites),
            metric,
            ci=ci,
            n_resamples=n,
            seed=seed,
        )
        for p, r in twins(subjects)
    ]
    return _stacked(intervals), _stacked(comparisons)


def _metric(task: Task) -> str:
    return "micro_f1" if task.target_type == "multilabel" else "accuracy"


def _stacked(frames: list[pl.DataFrame]) -> pl.DataFrame:
    full = [f for f in frames if f.height]
    return pl.concat(full) if full else pl.DataFrame()


def test_set_name(split: str) -> str:
    """The edge-probing name of a result split: "original" or the heuristic's name."""
    return ORIGINAL if split == "test" else split.removeprefix("test:")


def with_test_sets(scores: pl.DataFrame) -> pl.DataFrame:
    """Result rows of the test split and its filtered subsets, with a `test_set` column."""
    tests = scores.filter(pl.col("split").str.starts_with("test"))
    return tests.with_columns(
        test_set=pl.col("split").map_elements(test_set_name, return_dtype=pl.String)
    )


def drop_table(scores: pl.DataFrame) -> pl.DataFrame:
    """Mean over seeds of each filtered set's score, and the drop relative to the original."""
    task_scores = with_test_sets(scores).filter(pl.col("variant") == "task")
    keys = ["task", "model", "init", "site", "layer"]
    mean = task_scores.group_by(*keys, "test_set").agg(pl.col("value").mean() * 100)
    original = mean.filter(pl.col("test_set") == ORIGINAL).select(*keys, original="value")
    return (
        mean.filter(pl.col("test_set") != ORIGINAL)
        .join(original, on=keys)
        .with_columns(
            filtered=pl.col("value"),
            drop_pct=(pl.col("original") - pl.col("value")) * 100 / pl.col("original"),
        )
        .select(
            *keys,
            heuristic="test_set",
            original="original",
            filtered="filtered",
            drop_pct="drop_pct",
        )
        .sort([*keys, "heuristic"])
    )


def pretrained_vs_random(scores: pl.DataFrame, test_set: str = "mem_exact") -> pl.DataFrame:
    """Per site: task score (%) of the pretrained and the random subject on one test set."""
    marked = with_test_sets(scores)
    chosen = marked.filter((pl.col("variant") == "task") & (pl.col("test_set") == test_set))
    keys = ["task", "model", "site", "layer"]
    mean = chosen.group_by(*keys, "init").agg((pl.col("value").mean() * 100).alias("score"))
    wide = mean.pivot(on="init", index=keys, values="score").sort("task", "model", "layer")
    inits = [c for c in ("pretrained", "random") if c in wide.columns]
    return wide.select(*keys, *inits)
