"""The layer-wise syntax probe: logistic regression on mean-pooled sentence features per site.

Features come from `subject.features` (whole sentence mean-pooled, every layer) in one call for
all sentences of a run; one L2 logistic regression per site is fitted in a single batched call
(`probes.fit_logistic_regression`, equal to scikit-learn's) on the train rows and scored on the
test rows: accuracy per layer (the paper's Figure 1) and per layer x feature value (Figures 2-4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import torch
from jaxtyping import Float, Int
from torch import Tensor

from internals import FeatureSet, Site, SpanItem, Subject
from internals import sites as site_rules
from probes import ProbeConfigError, TrainConfig, fit_logistic_regression
from probes.stats import ItemResamples, bootstrap_probes, confidence_interval
from suites.cc.generate import feature_subsets
from suites.cc.syntax_feature_set import MIN_STD, stored_layer_predictions
from suites.errors import TaskError


@dataclass(frozen=True)
class SyntaxProbeConfig:
    """How the per-site probes are fitted.

    `memory` (bytes, or a size such as `"4GiB"`, as `TrainConfig.memory`) bounds the float32
    features held when the features come from a store: they stay on disk as a `FeatureSet`,
    the train rows are standardised into a derived one chunk by chunk, and the probes are fitted
    and scored by groups of sites that fit (`suites.cc.syntax_feature_set`). Results equal the
    in-memory fit. Without a store, `memory` is refused: the features would be held whole.
    """

    C: float = 1.0  # paper §3.1.3: scikit-learn LogisticRegression, whose default C is 1.0
    max_iter: int = 1000  # ours: scikit-learn's default 100 often stops early on raw features
    standardize: bool = True  # ours: z-score every site with train statistics (same C per layer)
    pool: str = "mean"  # paper §3.1.3: mean-pooled sentence embeddings (Vulić et al., 2020)
    ci: float | None = 0.95  # ours: BCa bootstrap interval of each site's test accuracy
    n_resamples: int = 1000  # bootstrap resamples of the test sentences (seed 0)
    memory: int | str | None = None  # bound on the features held, with a store; not results

    def __post_init__(self) -> None:
        try:
            TrainConfig(memory=self.memory)  # the same budgets, parsed by the same rule
        except ProbeConfigError as error:
            message = str(error).removeprefix("TrainConfig.")
            raise TaskError(f"SyntaxProbeConfig.{message}") from None

    @property
    def memory_bytes(self) -> int | None:
        """`memory` in bytes (None: no bound)."""
        return TrainConfig(memory=self.memory).memory_bytes


def sentence_features(
    subject: Subject,
    sentences: Sequence[str],
    sites: Sequence[Site] | None = None,
    *,
    pool: str = "mean",
    store: str | Path | None = None,
    progress: bool = True,
) -> Float[Tensor, "item site dim"]:
    """Pooled features of whole sentences at `sites` (default: every layer)."""
    chosen = list(sites) if sites is not None else site_rules.every_layer(subject)
    items = [SpanItem(s) for s in sentences]
    return subject.features(items, chosen, pool=pool, store=store, progress=progress)  # type: ignore[call-overload]


def layer_predictions(
    train_x: Float[Tensor, "item site dim"],
    train_y: Int[Tensor, " item"],
    test_x: Float[Tensor, "test site dim"],
    config: SyntaxProbeConfig = SyntaxProbeConfig(),
) -> Int[Tensor, "site test"]:
    """Fit one logistic regression per site on the train rows; predicted class of each test row."""
    train = train_x.transpose(0, 1).contiguous()  # [site, item, dim]
    test = test_x.transpose(0, 1).contiguous()
    if config.standardize:
        mean = train.mean(dim=1, keepdim=True)
        std = train.std(dim=1, keepdim=True).clamp_min(MIN_STD)
        train, test = (train - mean) / std, (test - mean) / std
    labels = train_y[None, :].expand(train.shape[0], -1).contiguous()
    fitted = fit_logistic_regression(train, labels, C=config.C, max_iter=config.max_iter)
    return fitted.predict(test)


def accuracy_tables(
    predictions: Int[Tensor, "site test"],
    test: pl.DataFrame,
    sites: Sequence[Site],
    value_column: str | None = "value",
    *,
    ci: float | None = None,
    n_resamples: int = 1000,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(accuracy per site, accuracy per site x value of `value_column`) on the test rows; with
    `ci`, the per-site table has the BCa bootstrap interval `ci_low`, `ci_high` (test sentences
    resampled jointly for every site, so layers are paired)."""
    labels = torch.tensor(test["label"].to_list(), dtype=torch.long)
    correct = (predictions == labels[None, :]).double()
    per_site = pl.DataFrame(
        {
            "site_name": [s.name for s in sites],
            "layer": [s.layer for s in sites],
            "accuracy": correct.mean(dim=1).tolist(),
            "n_test": [test.height] * len(sites),
        }
    )
    if ci is not None:
        truth = labels[None, :].expand_as(predictions)
        reps = bootstrap_probes(
            predictions,
            truth,
            ItemResamples(test.height, n_resamples, 0),
            head="classification",
            outputs=int(max(int(predictions.max()), int(labels.max())) + 1),
            metrics=["accuracy"],
        )
        low, high = confidence_interval(reps["accuracy"], ci, "bca")
        per_site = per_site.with_columns(ci_low=low.numpy(), ci_high=high.numpy())
    if value_column is None:
        return per_site, per_site.clear()
    long = pl.DataFrame(
        {
            "site_name": [s.name for s in sites for _ in range(test.height)],
            "layer": [s.layer for s in sites for _ in range(test.height)],
            "value": test[value_column].to_list() * len(sites),
            "correct": correct.flatten().tolist(),
        }
    )
    per_value = (
        long.group_by("site_name", "layer", "value", maintain_order=True)
        .agg(pl.col("correct").mean().alias("accuracy"), pl.len().cast(pl.Int64).alias("n"))
        .sort("layer", "value")
    )
    return per_site, per_value


def _rows(frame: pl.DataFrame, split: str) -> Tensor:
    return torch.tensor((frame["split"] == split).to_list(), dtype=torch.bool)


def _check_frame(name: str, frame: pl.DataFrame) -> None:
    train = frame.filter(pl.col("split") == "train")
    n_test = int((frame["split"] == "test").sum())
    if train["label"].n_unique() < 2 or n_test == 0:
        raise TaskError(
            f"frame {name!r} needs train rows of both labels and test rows; it has"
            f" {train.height} train rows (labels {sorted(set(train['label']))}) and {n_test}"
            " test rows"
        )


def probe_frames(
    subject: Subject,
    frames: Mapping[str, pl.DataFrame],
    *,
    config: SyntaxProbeConfig = SyntaxProbeConfig(),
    value_column: str | None = "value",
    sites: Sequence[Site] | None = None,
    store: str | Path | None = None,
    progress: bool = True,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Probe `sites` (default: every layer) on each named frame (columns sentence, label,
    split, `value_column`).

    Features of all frames come from one `features` call (shared sentences are encoded once).
    With `store` and `config.memory`, they stay in the store as a `FeatureSet` and are fitted
    and scored under the budget (`suites.cc.syntax_feature_set`), with equal results.
    Returns (per-layer table, per-layer x value table), both with a `feature` column holding the
    frame's name and `model`/`init` columns from the subject.
    """
    names = list(frames)
    for name in names:
        _check_frame(name, frames[name])
    sites = list(sites) if sites is not None else site_rules.every_layer(subject)
    sentences = pl.concat([frames[n].select("sentence") for n in names])["sentence"].to_list()
    budget = config.memory_bytes
    feats: Tensor | FeatureSet
    if budget is None:
        feats = sentence_features(
            subject, sentences, sites, pool=config.pool, store=store, progress=progress
        )
    elif store is None:
        raise TaskError(
            f"SyntaxProbeConfig.memory={config.memory!r} bounds features kept in a store; give"
            " a store (--store DIR, a sweep's `store`) or memory=None"
        )
    else:
        feats = subject.features(  # type: ignore[call-overload]
            [SpanItem(s) for s in sentences],
            sites,
            pool=config.pool,
            store=store,
            progress=progress,
            lazy=True,
        )
    layer_parts, value_parts, offset = [], [], 0
    for name in names:
        frame = frames[name]
        rows = torch.arange(offset, offset + frame.height)
        offset += frame.height
        train = frame.filter(pl.col("split") == "train")
        test = frame.filter(pl.col("split") == "test")
        train_y = torch.tensor(train["label"].to_list(), dtype=torch.long)
        train_rows, test_rows = rows[_rows(frame, "train")], rows[_rows(frame, "test")]
        if isinstance(feats, FeatureSet) and store is not None and budget is not None:
            predictions = stored_layer_predictions(
                feats,
                train_rows,
                train_y,
                test_rows,
                store=store,
                memory=budget,
                C=config.C,
                max_iter=config.max_iter,
                standardize=config.standardize,
            )
        else:
            predictions = layer_predictions(feats[train_rows], train_y, feats[test_rows], config)
        per_site, per_value = accuracy_tables(
            predictions, test, sites, value_column, ci=config.ci, n_resamples=config.n_resamples
        )
        tag = [
            pl.lit(name).alias("feature"),
            pl.lit(subject.name).alias("model"),
            pl.lit(subject.init).alias("init"),
        ]
        layer_parts.append(per_site.with_columns(tag))
        value_parts.append(per_value.with_columns(tag))
    return pl.concat(layer_parts), pl.concat(value_parts)


def probe_feature_subsets(
    subject: Subject,
    features: Sequence[str],
    n_per_value: int,
    seeds: Sequence[int] = (0,),
    *,
    config: SyntaxProbeConfig = SyntaxProbeConfig(),
    sites: Sequence[Site] | None = None,
    store: str | Path | None = None,
    progress: bool = True,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The synthetic experiment: D_f per feature and data seed, probed at `sites` (default:
    every layer).

    Returns (per-layer accuracy, per-layer x feature-value accuracy) with columns model, init,
    feature, seed, site_name, layer, [value, n,] accuracy.
    """
    layers, values = [], []
    for seed in seeds:
        subsets = feature_subsets(features, n_per_value, seed)
        per_layer, per_value = probe_frames(
            subject, subsets, config=config, sites=sites, store=store, progress=progress
        )
        layers.append(per_layer.with_columns(pl.lit(seed, dtype=pl.Int64).alias("seed")))
        values.append(per_value.with_columns(pl.lit(seed, dtype=pl.Int64).alias("seed")))
    return pl.concat(layers), pl.concat(values)
