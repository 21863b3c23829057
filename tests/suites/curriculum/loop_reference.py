"""The curriculum analyses as they ran before explicit train masks: one `fit_probes` call per
training set. The reference the one-grid versions must equal (tests) and beat (benchmarks)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl
import torch

from probes import ProbeResults, fit_probes
from probes.splits import TEST, TRAIN
from suites.curriculum import CurriculumConfig, NLIFeatures
from suites.curriculum.inoculation import probe_input
from suites.curriculum.probe_outputs import probe_probabilities
from suites.curriculum.pvi import label_prior, pointwise_v_information
from suites.curriculum.sampling import (
    base_codes,
    carve_dev,
    per_label_subsample,
    stratified_folds,
)
from suites.tasks import Task


def inoculation_loop(
    task: Task, feats: NLIFeatures, config: CurriculumConfig, inputs: Sequence[str]
) -> pl.DataFrame:
    """Rows (input, n_per_label, n_train, seed, site, split, metric, value, best_epoch)."""
    targets = task.targets
    base = base_codes(task, config.dev_fraction, config.split_seed)
    tables = []
    for size in config.sizes:
        for seed in config.seeds:
            codes = per_label_subsample(base, targets, size, seed)
            for name in inputs:
                result = fit_probes(
                    probe_input(feats, name, config),
                    targets,
                    codes,
                    config.probe_grid((seed,)),
                    config.train_config(),
                    num_classes=len(task.labels),
                    progress=False,
                )
                tables.append(
                    result.table()
                    .drop("variant", "mask", "site")  # inoculation's `site` is the index
                    .rename({"site_index": "site"})
                    .with_columns(
                        input=pl.lit(name),
                        n_per_label=pl.lit(size),
                        n_train=pl.lit(int((codes == TRAIN).sum())),
                    )
                )
    return pl.concat(tables)


def _fit(x: torch.Tensor, targets: torch.Tensor, codes: torch.Tensor, config, k: int, select_by):
    return fit_probes(
        x,
        targets,
        codes,
        config.probe_grid(),
        config.train_config(select_by=select_by),
        num_classes=k,
        progress=False,
    )


def pvi_loop(task: Task, feats: NLIFeatures, config: CurriculumConfig) -> torch.Tensor:
    """`[site, item]` PVI (seed mean): one call per cross-fitting fold and one for val."""
    x, targets, k = feats.pair(config.combine), task.targets, len(task.labels)
    train, test = task.splits == TRAIN, task.splits == TEST
    fold = stratified_folds(targets, train, config.pvi_folds, config.split_seed)
    pvi = torch.zeros(x.shape[1], len(task), dtype=torch.float64)
    jobs = [(train & (fold != f), fold == f) for f in range(config.pvi_folds)] + [(train, test)]
    for fit_on, heldout in jobs:
        codes = carve_dev(fit_on, targets, config.dev_fraction, config.split_seed, test=heldout)
        result: ProbeResults = _fit(x, targets, codes, config, k, "loss")
        rows = heldout.nonzero().flatten()
        probs = probe_probabilities(result, x[rows])
        prior = label_prior(targets, k, codes == TRAIN)
        values = pointwise_v_information(probs, targets[rows], prior)
        sites = torch.tensor(result.probes.sort("probe")["site"].to_list())
        per_site = torch.zeros(x.shape[1], rows.numel(), dtype=torch.float64)
        per_site.index_add_(0, sites, values)
        pvi[:, heldout] = per_site / torch.bincount(sites, minlength=x.shape[1])[:, None]
    return pvi


def cross_loop(
    task: Task, feats: NLIFeatures, halves: dict[str, torch.Tensor], config: CurriculumConfig
) -> dict[str, torch.Tensor]:
    """Test-set class probabilities `[probe, test item, class]` of each train half's probes."""
    x, targets, k = feats.pair(config.combine), task.targets, len(task.labels)
    is_train, is_test = task.splits == TRAIN, task.splits == TEST
    out = {}
    for name, half in halves.items():
        codes = carve_dev(is_train & half, targets, config.dev_fraction, config.split_seed)
        codes[is_test] = TEST
        result = _fit(x, targets, codes, config, k, None)
        out[name] = probe_probabilities(result, x[is_test])
    return out
