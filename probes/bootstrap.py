"""Paired bootstrap of every probe's test metrics at once, and percentile / BCa intervals.

All probes of a run are scored on the same test items, so one resample of the items serves
every probe: differences between probes (layers, task and control, two models on the same
items) are paired. For each resample b with item counts `w_b` (`probes._grid.resampling`), every
metric of every probe is computed from the weighted sums `w_b @ features`
(`probes.item_sums`): one matrix product `[resample, item] @ [item, probe * feature]` per
block, on the device; no resampled prediction is materialised.

Intervals (Efron & Tibshirani 1993, ch. 13 and 14; as `scipy.stats.bootstrap`):

* percentile: the (1−level)/2 and (1+level)/2 quantiles of the bootstrap replicates (linear
  interpolation, numpy's and scipy's default);
* BCa: the same replicates at the levels Φ(z0 + (z0 + z_α)/(1 − a (z0 + z_α))), with the bias
  correction z0 = Φ⁻¹(share of replicates below the estimate, ties counted half) and the
  acceleration a from the leave-one-item-out (jackknife) values, a = Σ U³ / (6 (Σ U²)^{3/2}),
  U_i = (n − 1)(θ̄₍.₎ − θ₍ᵢ₎). Where the jackknife values do not vary, a = 0 (the limit);
  where z0 is infinite (the estimate lies outside every replicate) scipy gives NaN, and we give
  the percentile interval and warn (`DegenerateIntervalWarning`).

Statistics that are linear combinations of probe metrics (a mean over seeds, a difference
between two probes) keep all three parts linear: `Replicates.combine`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import torch
from jaxtyping import Float, Shaped
from torch import Tensor

from probes._grid.inputs import TargetKind, resolve_device
from probes._grid.resampling import ItemResamples
from probes._grid.whole_counts import WholeValues, compact
from probes.errors import DegenerateIntervalWarning, ProbeConfigError
from probes.item_sums import ItemSums, item_sums

IntervalMethod = Literal["bca", "percentile"]
METHODS = ("bca", "percentile")
FEATURE_BYTES = 1 << 26  # bound on one block of item features (memory, not results)


@dataclass(frozen=True)
class Replicates:
    """Estimates of S statistics: on the test items (`point`), on every bootstrap resample
    (`boot`) and with each item left out (`jack`, for the BCa acceleration). float64, CPU."""

    point: Float[Tensor, " stat"]
    boot: Float[Tensor, "stat resample"]
    jack: Float[Tensor, "stat item"]

    def combine(self, weights: Float[Tensor, "new stat"]) -> Replicates:
        """The linear combinations `weights @ statistics` (e.g. seed means, differences).
        A combination is NaN where a statistic it uses (weight ≠ 0) is NaN."""
        w = weights.double()
        return Replicates(*(combine_rows(w, part) for part in (self.point, self.boot, self.jack)))

    def select(self, index: Sequence[int] | Tensor) -> Replicates:
        """The statistics at `index`."""
        at = torch.as_tensor(index, dtype=torch.long)
        return Replicates(self.point[at], self.boot[at], self.jack[at])


def combine_rows(weights: Tensor, values: Tensor) -> Tensor:
    flat = values.reshape(values.shape[0], -1)
    nan = flat.isnan()
    out = weights @ torch.where(nan, 0.0, flat)
    poisoned = (weights != 0).double() @ nan.double() > 0
    return torch.where(poisoned, torch.nan, out).reshape(weights.shape[0], *values.shape[1:])


def bootstrap_probes(
    pred: Shaped[Tensor, "probe item *label"],
    truth: Shaped[Tensor, "probe item *label"],
    resamples: ItemResamples,
    *,
    head: TargetKind,
    outputs: int,
    metrics: Sequence[str] | None = None,
    device: torch.device | str | None = None,
    jackknife: bool = True,
) -> dict[str, Replicates]:
    """Every probe's metrics on the test items, on each resample and with each item left out
    (`jackknife`, needed by BCa only; without it `jack` has no column).

    pred/truth: class ids `[probe, item]`, 0/1 label rows `[probe, item, label]` or values;
    `head` says which, `outputs` is the number of classes (labels; 1 for values).
    `resamples` must have `n_items` equal to the items here. Returns `{metric: Replicates}`
    with one statistic per probe.
    """
    sums = item_sums(head, outputs)
    names = check_metric_names(sums, metrics)
    n_probes, n_items = pred.shape[0], pred.shape[1]
    if tuple(truth.shape) != tuple(pred.shape) or resamples.n_items != n_items:
        raise ProbeConfigError(
            f"pred {tuple(pred.shape)}, truth {tuple(truth.shape)}, resamples of"
            f" {resamples.n_items} items: give predictions and targets of the same items and"
            " resamples drawn for that many items."
        )
    dev = resolve_device(device, pred)
    itemsize = torch.finfo(sums.dtype).bits // 8
    step = max(1, FEATURE_BYTES // (n_items * sums.width * itemsize))
    counts = [compact(c) for c in resamples.blocks(dev)]  # drawn once for every probe block
    parts: list[dict[str, Replicates]] = []
    for start in range(0, n_probes, step):
        block = slice(start, start + step)
        truth_block = truth[block].to(dev)
        feats = sums.features(pred[block].to(dev), truth_block)
        shared = _shared_rows(truth_block) if sums.shared_width else None
        parts.append(_replicates(sums, feats, shared, counts, names, jackknife))
    return {
        m: Replicates(*(torch.cat([getattr(p[m], f) for p in parts]) for f in _FIELDS))
        for m in names
    }


_FIELDS = ("point", "boot", "jack")


def check_metric_names(sums: ItemSums, metrics: Sequence[str] | None) -> list[str]:
    names = list(metrics) if metrics is not None else list(sums.metric_names)
    bad = [m for m in names if m not in sums.metric_names]
    if bad or not names:
        raise ProbeConfigError(f"metrics={names}: give some of {sums.metric_names}.")
    return names


def _shared_rows(truth: Tensor) -> tuple[Tensor, Tensor]:
    """(first probe of each distinct target row, each probe's distinct row)."""
    rows, inverse = torch.unique(truth.reshape(truth.shape[0], -1), dim=0, return_inverse=True)
    first = torch.full((rows.shape[0],), truth.shape[0], dtype=torch.long, device=truth.device)
    first.scatter_reduce_(0, inverse, torch.arange(truth.shape[0], device=truth.device), "amin")
    return first, inverse


def _replicates(
    sums: ItemSums,
    feats: Float[Tensor, "item probe feature"],
    shared: tuple[Tensor, Tensor] | None,
    count_blocks: list[Tensor],
    names: list[str],
    jackknife: bool,
) -> dict[str, Replicates]:
    """Point, bootstrap and jackknife values of one block of probes. Features that depend on
    the targets only (`shared`: probes with equal targets) are multiplied once per target row."""
    n, p, f = feats.shape
    total = sums.total(feats)
    point = sums.metrics(total, names)
    own = f - sums.shared_width if shared is not None else f
    flat = WholeValues(feats[..., :own].reshape(n, p * own), sums.whole)
    if shared is not None:
        rows = WholeValues(feats[:, shared[0], own:].reshape(n, -1), sums.whole)
    boot: dict[str, list[Tensor]] = {m: [] for m in names}
    for counts in count_blocks:
        sums_b = flat.product(counts).view(-1, p, own)
        if shared is not None:
            by_row = rows.product(counts).view(counts.shape[0], -1, f - own)
            sums_b = torch.cat([sums_b, by_row[:, shared[1]]], dim=-1)
        values = sums.metrics(sums_b, names)
        for m in names:
            boot[m].append(values[m].T)
    if jackknife:
        jack = {m: v.T for m, v in sums.jackknife(total, feats, names).items()}
    else:
        jack = {m: point[m].new_zeros(p, 0) for m in names}
    return {
        m: Replicates(point[m].cpu(), torch.cat(boot[m], dim=1).cpu(), jack[m].contiguous().cpu())
        for m in names
    }


def confidence_interval(
    reps: Replicates, level: float = 0.95, method: IntervalMethod = "bca"
) -> tuple[Float[Tensor, " stat"], Float[Tensor, " stat"]]:
    """(low, high) of each statistic: two-sided `level` interval, percentile or BCa."""
    if not 0 < level < 1 or method not in METHODS:
        raise ProbeConfigError(
            f"level={level}, method={method!r}: give 0 < level < 1 and one of {METHODS}."
        )
    alpha = (1 - level) / 2
    n_stat = reps.point.shape[0]
    low_q = torch.full((n_stat,), alpha, dtype=torch.float64)
    high_q = torch.full((n_stat,), 1 - alpha, dtype=torch.float64)
    if method == "bca":
        if reps.jack.shape[1] == 0:
            raise ProbeConfigError(
                "method='bca' needs the jackknife values: bootstrap with jackknife=True."
            )
        low_q, high_q = _bca_levels(reps, alpha, low_q, high_q)
    ordered = reps.boot.sort(dim=1).values
    nan = reps.boot.isnan().any(dim=1)
    low, high = _quantile(ordered, low_q), _quantile(ordered, high_q)
    return torch.where(nan, torch.nan, low), torch.where(nan, torch.nan, high)


def _bca_levels(
    reps: Replicates, alpha: float, low_q: Tensor, high_q: Tensor
) -> tuple[Tensor, Tensor]:
    """The BCa quantile levels; the percentile levels where BCa is undefined."""
    boot, theta = reps.boot, reps.point[:, None]
    below = (boot < theta).sum(1) + (boot <= theta).sum(1)
    z0 = torch.special.ndtri(below.double() / (2 * boot.shape[1]))
    u = reps.jack.mean(1, keepdim=True) - reps.jack  # (n−1) cancels in a
    num, den = (u**3).sum(1), (u**2).sum(1)
    a = torch.where(den == 0, 0.0, num / (6 * den**1.5))  # NaN stays NaN
    z = torch.tensor([alpha, 1 - alpha], dtype=torch.float64)
    z_alpha = torch.special.ndtri(z)
    levels = []
    for zq in z_alpha:
        shifted = z0 + zq
        levels.append(torch.special.ndtr(z0 + shifted / (1 - a * shifted)))
    ok = torch.isfinite(z0) & torch.isfinite(a) & levels[0].isfinite() & levels[1].isfinite()
    defined = reps.boot.isnan().any(1) | ok  # NaN replicates give NaN anyway
    if not bool(defined.all()):
        warnings.warn(
            f"BCa is undefined for {int((~defined).sum())} of {len(ok)} statistics (the"
            " estimate lies outside every bootstrap replicate, or a jackknife value is NaN);"
            " they get the percentile interval.",
            DegenerateIntervalWarning,
            stacklevel=3,
        )
    return torch.where(ok, levels[0], low_q), torch.where(ok, levels[1], high_q)


def _quantile(
    ordered: Float[Tensor, "stat resample"], q: Float[Tensor, " stat"]
) -> Float[Tensor, " stat"]:
    """Per-row quantile at level q[row] of sorted rows, linear interpolation (numpy's)."""
    last = ordered.shape[1] - 1
    pos = q.clamp(0, 1) * last
    lo = pos.floor().long().clamp(0, last)
    hi = (lo + 1).clamp(max=last)
    frac = pos - lo
    a = ordered.gather(1, lo[:, None])[:, 0]
    b = ordered.gather(1, hi[:, None])[:, 0]
    return a + frac * (b - a)
