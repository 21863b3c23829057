"""Metrics of every probe at once, equal to sklearn's and scipy's on each probe.

Classification metrics come from per-class counts `[probe, class]` (true positives, true and
predicted totals: bincounts over `probe*K + class`, memory linear in the number of classes K);
`confusion_matrices` gives the whole `[probe, true, pred]` table where it is wanted. Macro-F1
averages over the classes present in the truth or the predictions of the included items, as
`sklearn.metrics.f1_score` does by default; MCC is sklearn's multiclass formula and 0 where it
is undefined; Pearson's r is NaN for constant inputs, as scipy's. Probes with no included item
get NaN.

Every metric is a function of per-item sums: class counts (true positives, true and predicted
totals), label counts, or moments. This module counts; the formulas are the records of
`probes.metric_table`, which the bootstrap (`probes.item_sums`) applies to resampled sums.
"""

from __future__ import annotations

import torch
from jaxtyping import Bool, Float, Int
from torch import Tensor

from probes.metric_table import (
    ClassCounts,
    LabelCounts,
    Moments,
    accuracy_from_counts,
    from_sums,
    macro_f1_from_counts,
    mcc_from_counts,
    pearson_from_sums,
)


def confusion_matrices(
    pred: Int[Tensor, "probe item"],
    true: Int[Tensor, "probe item"],
    num_classes: int,
    include: Bool[Tensor, "probe item"] | None = None,
) -> Int[Tensor, "probe class class"]:
    """Counts `[probe, true class, predicted class]` over the included items (one bincount over
    `probe*K*K + true*K + pred`, built in place in one index tensor; excluded items go to a
    spare bin instead of being copied out)."""
    p, k = pred.shape[0], num_classes
    flat = true.to(torch.int64) * k
    flat += pred
    flat += torch.arange(p, device=pred.device)[:, None] * (k * k)
    if include is not None:
        flat.masked_fill_(~include, p * k * k)
    counts = torch.bincount(flat.reshape(-1), minlength=p * k * k + 1)
    return counts[: p * k * k].view(p, k, k)


def accuracy(conf: Int[Tensor, "probe class class"]) -> Float[Tensor, " probe"]:
    """Fraction of items on the diagonal (equals micro-F1 for single-label classes)."""
    return accuracy_from_counts(_class_counts(conf))


def macro_f1(conf: Int[Tensor, "probe class class"]) -> Float[Tensor, " probe"]:
    """Unweighted mean F1 over the classes that occur in the truth or the predictions."""
    return macro_f1_from_counts(_class_counts(conf))


def mcc(conf: Int[Tensor, "probe class class"]) -> Float[Tensor, " probe"]:
    """Matthews correlation (multiclass, as sklearn's `matthews_corrcoef`); 0 when undefined."""
    return mcc_from_counts(_class_counts(conf))


def _class_counts(conf: Int[Tensor, "probe class class"]) -> ClassCounts:
    c = conf.double()
    return ClassCounts(c.diagonal(dim1=1, dim2=2), c.sum(2), c.sum(1))


def classification_metrics(
    pred: Int[Tensor, "probe item"],
    true: Int[Tensor, "probe item"],
    num_classes: int,
    include: Bool[Tensor, "probe item"] | None = None,
) -> dict[str, Float[Tensor, " probe"]]:
    """Every classification metric of `probes.metric_table` per probe."""
    return from_sums("classification", ClassCounts(*class_counts(pred, true, num_classes, include)))


def class_counts(
    pred: Int[Tensor, "probe item"],
    true: Int[Tensor, "probe item"],
    num_classes: int,
    include: Bool[Tensor, "probe item"] | None = None,
) -> tuple[
    Float[Tensor, "probe class"], Float[Tensor, "probe class"], Float[Tensor, "probe class"]
]:
    """(true positives, true totals, predicted totals) per probe and class over the included
    items, float64: the diagonal and the two margins of `confusion_matrices` without its K*K
    cells."""
    p, k = pred.shape[0], num_classes
    offset = torch.arange(p, device=pred.device)[:, None] * k
    weight = torch.ones(pred.shape, dtype=torch.float64, device=pred.device)
    if include is not None:
        weight = weight * include
    true_bins = (true.to(torch.int64) + offset).reshape(-1)

    def count(bins: Tensor, weights: Tensor) -> Tensor:
        return torch.bincount(bins, weights=weights.reshape(-1), minlength=p * k).view(p, k)

    hits = weight * (pred == true)
    return (
        count(true_bins, hits),
        count(true_bins, weight),
        count((pred.to(torch.int64) + offset).reshape(-1), weight),
    )


def multilabel_metrics(
    pred: Bool[Tensor, "probe item label"],
    true: Bool[Tensor, "probe item label"],
    include: Bool[Tensor, "probe item"] | None = None,
) -> dict[str, Float[Tensor, " probe"]]:
    """Every multi-label metric of `probes.metric_table` per probe (micro-F1, macro-F1 over
    all labels, subset accuracy), as sklearn on indicator matrices."""
    return from_sums("multilabel", label_counts(pred, true, include))


def label_counts(
    pred: Bool[Tensor, "probe item label"],
    true: Bool[Tensor, "probe item label"],
    include: Bool[Tensor, "probe item"] | None = None,
) -> LabelCounts:
    """Per-label tp, fp, fn, the exact-match count and n of the included items, float64."""
    w = torch.ones(pred.shape[:2], device=pred.device) if include is None else include.double()
    w = w.double()[..., None]
    return LabelCounts(
        tp=(pred & true).double().mul(w).sum(1),
        fp=(pred & ~true).double().mul(w).sum(1),
        fn=(~pred & true).double().mul(w).sum(1),
        exact=(pred == true).all(-1).double().mul(w[..., 0]).sum(-1),
        n=w[..., 0].sum(-1),
    )


def pearson(
    pred: Float[Tensor, "probe item"],
    true: Float[Tensor, "probe item"],
    include: Bool[Tensor, "probe item"] | None = None,
) -> Float[Tensor, " probe"]:
    """Pearson's r per probe (float64); NaN for fewer than 2 items or a constant input."""
    return pearson_from_sums(value_moments(pred, true, include))


def value_moments(
    pred: Float[Tensor, "probe item"],
    true: Float[Tensor, "probe item"],
    include: Bool[Tensor, "probe item"] | None = None,
) -> Moments:
    """The included items' moments, each probe's values centred on their own mean."""
    w = torch.ones_like(pred, dtype=torch.float64) if include is None else include.double()
    x, y = pred.double(), true.double()
    n = w.sum(-1, keepdim=True)
    dx = (x - (w * x).sum(-1, keepdim=True) / n) * w
    dy = (y - (w * y).sum(-1, keepdim=True) / n) * w
    zero = torch.zeros_like(n[:, 0])
    se = (w * (x - y) ** 2).sum(-1)
    sums = (dx * dx).sum(-1), (dy * dy).sum(-1), (dx * dy).sum(-1)
    return Moments(n[:, 0], zero, zero, *sums, se)


def regression_metrics(
    pred: Float[Tensor, "probe item"],
    true: Float[Tensor, "probe item"],
    include: Bool[Tensor, "probe item"] | None = None,
) -> dict[str, Float[Tensor, " probe"]]:
    """Every regression metric of `probes.metric_table` per probe (pearson, mse)."""
    return from_sums("regression", value_moments(pred, true, include))
