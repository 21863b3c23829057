"""Confidence intervals of seed-mean test metrics per (site, variant, mask): `summary(ci=...)`.

What is resampled, and so what the interval covers (`seeds`):

* `"fixed"` (default): the test items, jointly for every probe (paired). In each resample every
  probe is scored on the resampled items and the metric is averaged over the group's seeds, so
  the interval covers the item-sampling variation of the seed mean, for these trained probes.
  Seed-to-seed variation is reported separately (`std` over seeds), not inside the interval.
* `"resample"`: also the seeds, with replacement and independently of the items in each
  resample (Owen 2007, the "pigeonhole" bootstrap for crossed factors), so the interval also
  covers the variation of a fresh draw of training seeds. Percentile intervals only (the BCa
  acceleration is defined for one resampled factor); with few seeds (3) it is rough.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import polars as pl
import torch

from probes._grid.resampling import ItemResamples, seed_counts
from probes.bootstrap import IntervalMethod, Replicates, bootstrap_probes, confidence_interval
from probes.errors import ProbeConfigError
from probes.predictions import TestPredictions
from probes.rank_bootstrap import bootstrap_rank_metrics
from probes.rank_metrics import RANK_METRICS

SeedResampling = Literal["fixed", "resample"]
GROUP = ["site", "variant", "mask"]


def seed_mean_intervals(
    probes: pl.DataFrame,
    test: TestPredictions | None,
    *,
    ci: float = 0.95,
    n_resamples: int = 1000,
    method: IntervalMethod = "bca",
    seeds: SeedResampling = "fixed",
    seed: int = 0,
    device: torch.device | str | None = None,
    metrics: Sequence[str] | None = None,
) -> pl.DataFrame:
    """`site, variant, mask, metric, ci_low, ci_high` of the test split's seed means, for
    `metrics` (default: every metric of the head, and AUROC and recall at FPR where the test
    class scores are kept; those rank metrics cost O(resamples x probes x classes x items))."""
    if seeds not in ("fixed", "resample") or (seeds == "resample" and method != "percentile"):
        raise ProbeConfigError(
            f"seeds={seeds!r} with method={method!r}: give seeds 'fixed' (any method) or"
            " 'resample' with method='percentile'."
        )
    test = require_test(test)
    ordered = probes.sort("probe")
    groups = ordered.group_by(GROUP, maintain_order=True).agg(pl.col("probe"), pl.col("seed"))
    counted = None if metrics is None else [m for m in metrics if m not in RANK_METRICS]
    ranked = metrics is None or len(counted or []) < len(metrics)
    if ranked and metrics is not None and test.scores is None:
        raise ProbeConfigError(
            f"metrics={list(metrics)}: {list(RANK_METRICS)} need the test class scores of"
            " classification probes; these results have none (refit with fit_probes)."
        )
    resamples = ItemResamples(test.n_items, n_resamples, seed)
    reps = {}
    if counted is None or counted:
        reps = bootstrap_probes(
            test.pred,
            test.truth(),
            resamples,
            head=test.head,
            outputs=test.outputs,
            metrics=counted,
            device=device,
            jackknife=method == "bca",
        )
    if ranked and test.scores is not None:  # classification: AUROC, recall at FPR; same draws
        reps |= bootstrap_rank_metrics(
            test.scores, test.truth(), resamples, device=device, jackknife=method == "bca"
        )
        reps = {m: r for m, r in reps.items() if metrics is None or m in metrics}
    parts = []
    for metric, per_probe in reps.items():
        if seeds == "fixed":
            weights = torch.zeros(groups.height, ordered.height, dtype=torch.float64)
            for g, members in enumerate(groups["probe"].to_list()):
                weights[g, members] = 1.0 / len(members)
            low, high = confidence_interval(per_probe.combine(weights), ci, method)
        else:
            low, high = _pigeonhole(per_probe, groups["probe"].to_list(), ci, seed)
        parts.append(
            groups.select(GROUP).with_columns(
                metric=pl.lit(metric), ci_low=low.numpy(), ci_high=high.numpy()
            )
        )
    return pl.concat(parts)


def require_test(test: TestPredictions | None) -> TestPredictions:
    """`test`, or a clear error when the results carry no test predictions."""
    if test is None:
        raise ProbeConfigError(
            "these results carry no test predictions (fitted or saved by an older lingprobe,"
            " or built by hand); refit with fit_probes, or pass ci=None for no intervals."
        )
    return test


def _pigeonhole(
    reps: Replicates, members: list[list[int]], ci: float, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Percentile intervals of seed means with seeds drawn again in every item resample."""
    n_boot = reps.boot.shape[1]
    boot = torch.empty(len(members), n_boot, dtype=torch.float64)
    point = torch.empty(len(members), dtype=torch.float64)
    for g, probes in enumerate(members):
        counts = seed_counts(len(probes), n_boot, seed).double()  # same draw for equal sizes
        values = reps.boot[probes]  # [seed, resample]
        boot[g] = (counts.T * values).sum(0) / len(probes)
        point[g] = reps.point[probes].mean()
    empty = torch.zeros(len(members), 0, dtype=torch.float64)
    return confidence_interval(Replicates(point, boot, empty), ci, "percentile")
