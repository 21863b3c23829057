"""One probing experiment: a subject's features on a task, one batched probe grid, tidy tables.

This is the suites' single path from (subject, task) to results: features come from
`internals` (cached in the activation store when `store` is given), probes from `probes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import torch
from torch import Tensor

from internals import Site, Subject
from internals import sites as site_rules
from probes import ProbeGrid, ProbeResults, TrainConfig, fit_probes
from suites.schema import conform, score_table, site_columns
from suites.tasks import Task


@dataclass(frozen=True)
class ProbeRun:
    """Results of one (subject, task) experiment with the names needed to read them."""

    model: str
    init: str
    task: Task
    sites: tuple[Site, ...]
    results: ProbeResults

    def rows(self, suite: str = "", unit: str = "") -> pl.DataFrame:
        """Every probe's metrics in `suites.schema.RESULTS_SCHEMA` (sites by name)."""
        table = self.results.table().rename({"site": "site_index"})
        frame = table.join(site_columns(self.sites), on="site_index").drop(
            "site_index", "best_epoch"
        )
        return conform(
            frame,
            model=self.model,
            init=self.init,
            suite=suite,
            task=self.task.name,
            phenomenon=self.task.phenomenon,
            phenomenon_type=self.task.phenomenon_type,
            unit=unit,
        )

    def table(self) -> pl.DataFrame:
        """`rows()`: model, init, suite, task, ..., site, layer, seed, variant, mask, split..."""
        return self.rows()

    def summary(self) -> pl.DataFrame:
        """Scores per site, mask, split and metric: mean, sigma, control and selectivity."""
        return score_table(self.rows())


def task_features(
    subject: Subject,
    task: Task,
    sites: Sequence[Site] | None = None,
    *,
    pool: str = "mean",
    store: str | Path | None = None,
    progress: bool = True,
) -> Tensor:
    """`subject.features` of the task's items (every layer unless `sites` is given)."""
    chosen = list(sites) if sites is not None else site_rules.every_layer(subject)
    return subject.features(task.items(), chosen, pool=pool, store=store, progress=progress)  # type: ignore[arg-type]


def probe_task(
    subject: Subject,
    task: Task,
    sites: Sequence[Site] | None = None,
    *,
    grid: ProbeGrid | None = None,
    config: TrainConfig | None = None,
    pool: str = "mean",
    store: str | Path | None = None,
    features: Tensor | None = None,
    device: str | torch.device | None = None,
    progress: bool = True,
) -> ProbeRun:
    """Extract (or take) features and train the whole probe grid on them in one optimisation."""
    chosen = tuple(sites) if sites is not None else tuple(site_rules.every_layer(subject))
    feats = (
        features
        if features is not None
        else task_features(subject, task, chosen, pool=pool, store=store, progress=progress)
    )
    results = fit_probes(
        feats,
        task.targets,
        task.splits,
        grid or ProbeGrid(),
        config or TrainConfig(),
        keys=task.keys,
        device=device,
        progress=progress,
    )
    return ProbeRun(subject.name, subject.init, task, chosen, results)
