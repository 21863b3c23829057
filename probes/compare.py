"""Paired comparisons of two sets of probes: difference, confidence interval, p-value, Holm.

A side is a selection of probes (`left_where={"site": 3}`), from one `ProbeResults` or from
two scored on the same test items (pretrained against random). Both sides are grouped by `by`
(default: site, variant and mask, less the columns fixed by a `where`), and within a group the
left and right probes are paired by seed. A row's statistic is the difference of the seed
means, `mean_s metric(left_s) − mean_s metric(right_s)`, on the test items:

* its interval: the paired bootstrap of the test items (one set of resamples for every probe
  of both sides; `probes.bootstrap`), percentile or BCa;
* its p-value: the paired permutation test (each item's outcomes swap sides, the same swap for
  every seed pair of the row; `probes.significance`) or the paired bootstrap test;
* `p_holm`: Holm–Bonferroni over the rows of one metric (the family is one call).

Examples: layer against layer `compare_probes(r, left_where={"site": 4},
right_where={"site": 3})`; selectivity `compare_probes(r, left_where={"variant": "task"},
right_where={"variant": "control"})`; models `compare_probes(pretrained, random)`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, Protocol, runtime_checkable

import polars as pl
import torch

from probes._grid.resampling import ItemResamples, SwapPatterns
from probes.bootstrap import IntervalMethod, bootstrap_probes, confidence_interval
from probes.errors import ProbeConfigError, ProbeInputError
from probes.intervals import GROUP, require_test
from probes.predictions import TestPredictions
from probes.significance import (
    Alternative,
    bootstrap_p_values,
    holm_bonferroni,
    permutation_test,
)

PairedTest = Literal["permutation", "bootstrap"]


@runtime_checkable
class ScoredProbes(Protocol):
    """What a comparison reads of a `ProbeResults`: its probe table and test predictions."""

    @property
    def probes(self) -> pl.DataFrame: ...

    @property
    def test(self) -> TestPredictions | None: ...


COLUMNS = ["metric", "n_pairs", "left", "right", "difference", "ci_low", "ci_high"]


def compare_probes(
    left: ScoredProbes,
    right: ScoredProbes | None = None,
    *,
    left_where: Mapping[str, object] | None = None,
    right_where: Mapping[str, object] | None = None,
    by: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    ci: float = 0.95,
    n_resamples: int = 1000,
    method: IntervalMethod = "bca",
    test: PairedTest = "permutation",
    alternative: Alternative = "two-sided",
    seed: int = 0,
    device: torch.device | str | None = None,
) -> pl.DataFrame:
    """One row per group and metric: `*by, metric, n_pairs, left, right, difference, ci_low,
    ci_high, p_value, p_holm` (left/right: the seed means; difference = left − right)."""
    if test not in ("permutation", "bootstrap"):
        raise ProbeConfigError(f"test={test!r}: give 'permutation' or 'bootstrap'.")
    left_where, right_where = dict(left_where or {}), dict(right_where or {})
    preds = require_test(left.test)
    frame_r = left.probes
    if right is not None and right is not left:
        preds = preds.concat(require_test(right.test))
        frame_r = right.probes.with_columns(pl.col("probe") + left.probes.height)
    keys = list(by) if by is not None else [c for c in GROUP if c not in left_where | right_where]
    pairs = _pairs(
        _where(left.probes, left_where, "left_where"),
        _where(frame_r, right_where, "right_where"),
        keys,
    )
    _check_targets(preds, pairs)
    groups = pairs.group_by(keys or pl.lit(0), maintain_order=True).agg(
        pl.col("left"), pl.col("right")
    )
    used = sorted(set(pairs["left"].to_list()) | set(pairs["right"].to_list()))
    column = {p: i for i, p in enumerate(used)}
    side = torch.zeros(2, groups.height, len(used), dtype=torch.float64)
    pair_weights = torch.zeros(groups.height, pairs.height, dtype=torch.float64)
    first = 0
    for g, (lefts, rights) in enumerate(groups.select("left", "right").iter_rows()):
        for lp, rp in zip(lefts, rights):
            side[0, g, column[lp]] += 1.0 / len(lefts)
            side[1, g, column[rp]] += 1.0 / len(lefts)
        pair_weights[g, first : first + len(lefts)] = 1.0 / len(lefts)
        first += len(lefts)
    at = torch.tensor(used)
    reps = bootstrap_probes(
        *preds.select(at),
        ItemResamples(preds.n_items, n_resamples, seed),
        head=preds.head,
        outputs=preds.outputs,
        metrics=metrics,
        device=device,
        jackknife=method == "bca",
    )
    names = list(reps)
    if test == "permutation":
        ordered = groups.explode("left", "right")  # the pair order of `pair_weights`
        lp, rp = torch.tensor(ordered["left"].to_list()), torch.tensor(ordered["right"].to_list())
        tested = permutation_test(
            preds.select(lp),
            preds.select(rp),
            pair_weights,
            SwapPatterns(preds.n_items, n_resamples, seed),
            head=preds.head,
            outputs=preds.outputs,
            metrics=names,
            alternative=alternative,
            device=device,
        )
    base = groups.select(keys) if keys else pl.DataFrame({"_": [0] * groups.height})
    rows = []
    for metric in names:
        diff = reps[metric].combine(side[0] - side[1])
        low, high = confidence_interval(diff, ci, method)
        if test == "permutation":
            p_value = tested[metric][1]
        else:
            p_value = bootstrap_p_values(diff, alternative)
        rows.append(
            base.with_columns(
                metric=pl.lit(metric),
                n_pairs=groups["left"].list.len().cast(pl.Int64),
                left=reps[metric].combine(side[0]).point.numpy(),
                right=reps[metric].combine(side[1]).point.numpy(),
                difference=diff.point.numpy(),
                ci_low=low.numpy(),
                ci_high=high.numpy(),
                p_value=p_value.numpy(),
                p_holm=holm_bonferroni(p_value.numpy()),
            )
        )
    return pl.concat(rows).drop("_", strict=False)


def _where(frame: pl.DataFrame, where: dict[str, object], name: str) -> pl.DataFrame:
    bad = [c for c in where if c not in frame.columns]
    if bad:
        raise ProbeConfigError(f"{name}: unknown columns {bad}; use some of {frame.columns}.")
    chosen = frame.filter(*(pl.col(c) == v for c, v in where.items())) if where else frame
    if chosen.height == 0:
        raise ProbeConfigError(f"{name}={where}: no probe matches; check the values.")
    return chosen


def _pairs(left: pl.DataFrame, right: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """(keys..., seed, left, right) probe pairs, joined on the keys and the seed."""
    on = list(dict.fromkeys([*keys, "seed"]))
    for name, frame in (("left", left), ("right", right)):
        bad = [c for c in on if c not in frame.columns]
        if bad:
            raise ProbeConfigError(f"by: unknown columns {bad}; use some of {GROUP}.")
        repeated = frame.group_by(on).len().filter(pl.col("len") > 1)
        if repeated.height:
            varying = [c for c in GROUP if c not in on and frame[c].n_unique() > 1]
            raise ProbeConfigError(
                f"the {name} side has several probes per {on} (they differ in {varying}); add"
                f" those columns to `by` or fix them in {name}_where."
            )
    pairs = left.select(*on, left="probe", left_variant="variant").join(
        right.select(*on, right="probe", right_variant="variant"), on=on, how="inner"
    )
    if pairs.height == 0:
        raise ProbeConfigError(
            f"no probe of the left side has a partner on the right with equal {on}; check"
            " `by` and the where filters."
        )
    return pairs.sort(on)


def _check_targets(preds: TestPredictions, pairs: pl.DataFrame) -> None:
    """Pairs of the same variant must be scored against the same targets."""
    same = pairs.filter(pl.col("left_variant") == pl.col("right_variant"))
    rows_l = preds.target_row[torch.tensor(same["left"].to_list(), dtype=torch.long)]
    rows_r = preds.target_row[torch.tensor(same["right"].to_list(), dtype=torch.long)]
    for a, b in set(zip(rows_l.tolist(), rows_r.tolist())):
        if a != b and not torch.equal(preds.targets[a], preds.targets[b]):
            raise ProbeInputError(
                "paired probes of the same variant are scored against different targets: the"
                " two results do not share their test labels; pair runs on the same task data."
            )
