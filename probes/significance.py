"""Paired significance tests of metric differences between probes, and Holm–Bonferroni.

* Paired permutation (swap) test: under the null that the two probes (or two sets of paired
  probes, e.g. the seeds of two layers) are exchangeable item by item, each item's outcomes
  (prediction and target) trade places between the two sides with probability ½; the
  statistic is the difference of the (seed-mean) metrics. As
  `scipy.stats.permutation_test(permutation_type="samples")`: every pattern when
  `n_resamples` ≥ 2^n (exact, p = share of patterns at least as extreme), else random patterns
  with p = (k + 1)/(n_resamples + 1); two-sided p = 2 min(p_less, p_greater), capped at 1; a
  relative tolerance of 100 machine epsilons counts numerically equal values as ties. All
  pairs and patterns are one batched computation: swapping moves `swap @ (features_left −
  features_right)` from one side's sums to the other's.
* Paired bootstrap test (Efron & Tibshirani 1993 §16.4): the bootstrap replicates of the
  difference, shifted to mean zero under the null (Δ*_b − Δ̂), against Δ̂, with the same
  p-value rules (random resamples: +1 correction).
* Holm (1979) step-down adjustment over a family of p-values, as statsmodels'
  `multipletests(method="holm")`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import torch
from jaxtyping import Float, Shaped
from torch import Tensor

from probes._grid.inputs import TargetKind, resolve_device
from probes._grid.resampling import SwapPatterns
from probes._grid.whole_counts import WholeValues, compact
from probes.bootstrap import FEATURE_BYTES, Replicates, check_metric_names, combine_rows
from probes.errors import ProbeConfigError
from probes.item_sums import item_sums

Alternative = Literal["two-sided", "less", "greater"]
ALTERNATIVES = ("two-sided", "less", "greater")


def p_values(
    null: Float[Tensor, "stat resample"],
    observed: Float[Tensor, " stat"],
    alternative: Alternative = "two-sided",
    exact: bool = False,
) -> Float[Tensor, " stat"]:
    """p-values of `observed` against a null distribution per statistic (scipy's rules)."""
    if alternative not in ALTERNATIVES:
        raise ProbeConfigError(f"alternative={alternative!r}: give one of {ALTERNATIVES}.")
    adjust = 0 if exact else 1
    gamma = (observed * (100 * torch.finfo(torch.float64).eps)).abs()[:, None]
    obs = observed[:, None]
    n = null.shape[1]
    less = ((null <= obs + gamma).sum(1) + adjust) / (n + adjust)
    greater = ((null >= obs - gamma).sum(1) + adjust) / (n + adjust)
    p = {"less": less, "greater": greater, "two-sided": 2 * torch.minimum(less, greater)}
    out = p[alternative].double().clamp(0.0, 1.0)
    return torch.where(observed.isnan() | null.isnan().any(1), torch.nan, out)


def bootstrap_p_values(
    diff: Replicates, alternative: Alternative = "two-sided"
) -> Float[Tensor, " stat"]:
    """Paired bootstrap test of each difference against 0 (replicates shifted to the null)."""
    return p_values(diff.boot - diff.point[:, None], diff.point, alternative)


def permutation_test(
    left: tuple[Shaped[Tensor, "pair item *label"], Shaped[Tensor, "pair item *label"]],
    right: tuple[Shaped[Tensor, "pair item *label"], Shaped[Tensor, "pair item *label"]],
    weights: Float[Tensor, "comparison pair"],
    swaps: SwapPatterns,
    *,
    head: TargetKind,
    outputs: int,
    metrics: Sequence[str],
    alternative: Alternative = "two-sided",
    device: torch.device | str | None = None,
) -> dict[str, tuple[Float[Tensor, " comparison"], Float[Tensor, " comparison"]]]:
    """Paired permutation test of `weights @ (metric(left) − metric(right))` per comparison.

    left/right: (predictions, targets) of the paired probes, pair j of the left against pair j
    of the right, on the same items. Returns `{metric: (observed difference, p-value)}`.
    """
    sums = item_sums(head, outputs)
    metrics = check_metric_names(sums, metrics)
    pred_l, truth_l = left
    pred_r, truth_r = right
    n_pairs, n_items = pred_l.shape[0], pred_l.shape[1]
    if pred_r.shape[:2] != pred_l.shape[:2] or swaps.n_items != n_items:
        raise ProbeConfigError(
            f"left {tuple(pred_l.shape)} and right {tuple(pred_r.shape)} predictions, swaps"
            f" of {swaps.n_items} items: give paired probes on the same items."
        )
    dev = resolve_device(device, pred_l)
    step = max(1, FEATURE_BYTES // (2 * n_items * sums.width * 8))
    null: dict[str, list[Tensor]] = {m: [] for m in metrics}
    observed: dict[str, list[Tensor]] = {m: [] for m in metrics}
    flag_blocks = [compact(f) for f in swaps.blocks(dev)]  # drawn once for every pair block
    for start in range(0, n_pairs, step):
        block = slice(start, start + step)
        both = sums.features(  # one call: one shift of the value moments for both sides
            torch.cat([pred_l[block], pred_r[block]]).to(dev),
            torch.cat([truth_l[block], truth_r[block]]).to(dev),
        )
        feat_l, feat_r = both.chunk(2, dim=1)
        total_l, total_r = sums.total(feat_l), sums.total(feat_r)
        start_l, start_r = sums.metrics(total_l, metrics), sums.metrics(total_r, metrics)
        moved = WholeValues((feat_l - feat_r).reshape(n_items, -1), sums.whole)
        block_null: dict[str, list[Tensor]] = {m: [] for m in metrics}
        for flags in flag_blocks:
            delta = moved.product(flags).double().view(flags.shape[0], *total_l.shape)
            m_l = sums.metrics(total_l - delta, metrics)
            m_r = sums.metrics(total_r + delta, metrics)
            for m in metrics:
                block_null[m].append((m_l[m] - m_r[m]).T)
        for m in metrics:
            null[m].append(torch.cat(block_null[m], dim=1).cpu())
            observed[m].append((start_l[m] - start_r[m]).cpu())
    w = weights.double()
    out = {}
    for m in metrics:
        obs = combine_rows(w, torch.cat(observed[m]))
        dist = combine_rows(w, torch.cat(null[m]))
        out[m] = (obs, p_values(dist, obs, alternative, exact=swaps.exact))
    return out


def holm_bonferroni(p: Float[np.ndarray, " test"] | Sequence[float]) -> Float[np.ndarray, " test"]:
    """Holm's step-down adjusted p-values (NaN stays NaN and is not counted in the family).

    With the m finite p-values sorted, p₍₁₎ ≤ … ≤ p₍ₘ₎, the adjusted value of p₍ᵢ₎ is
    max_{j ≤ i} min(1, (m − j + 1) p₍ⱼ₎); reject at level α where it is ≤ α.
    """
    values = np.asarray(p, dtype=np.float64)
    out = np.full(values.shape, np.nan)
    finite = np.flatnonzero(~np.isnan(values))
    m = finite.size
    if m == 0:
        return out
    order = finite[np.argsort(values[finite], kind="stable")]
    scaled = np.minimum(1.0, (m - np.arange(m)) * values[order])
    out[order] = np.maximum.accumulate(scaled)
    return out
