"""Metrics of every probe at once, equal to sklearn's and scipy's on each probe.

Classification metrics come from per-class counts `[probe, class]` (true positives, true and
predicted totals: bincounts over `probe*K + class`, memory linear in the number of classes K);
`confusion_matrices` gives the whole `[probe, true, pred]` table where it is wanted. Macro-F1
averages over the classes present in the truth or the predictions of the included items, as
`sklearn.metrics.f1_score` does by default; MCC is sklearn's multiclass formula and 0 where it
is undefined; Pearson's r is NaN for constant inputs, as scipy's. Probes with no included item
get NaN.

Every metric is a function of per-item sums (`*_from_counts`, `pearson_from_sums`): class
counts (true positives, true and predicted totals), label counts, or moments. The bootstrap
(`probes.bootstrap`) evaluates the same functions on resampled sums.
"""

from __future__ import annotations

import torch
from jaxtyping import Bool, Float, Int
from torch import Tensor


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
    return accuracy_from_counts(*_class_counts(conf))


def macro_f1(conf: Int[Tensor, "probe class class"]) -> Float[Tensor, " probe"]:
    """Unweighted mean F1 over the classes that occur in the truth or the predictions."""
    return macro_f1_from_counts(*_class_counts(conf))


def mcc(conf: Int[Tensor, "probe class class"]) -> Float[Tensor, " probe"]:
    """Matthews correlation (multiclass, as sklearn's `matthews_corrcoef`); 0 when undefined."""
    return mcc_from_counts(*_class_counts(conf))


def _class_counts(conf: Int[Tensor, "probe class class"]) -> tuple[Tensor, Tensor, Tensor]:
    c = conf.double()
    return c.diagonal(dim1=1, dim2=2), c.sum(2), c.sum(1)


def accuracy_from_counts(
    tp: Float[Tensor, "*batch class"],
    true: Float[Tensor, "*batch class"],
    pred: Float[Tensor, "*batch class"],
) -> Float[Tensor, "*batch"]:
    """Accuracy from per-class true positives and true/predicted totals (`pred` unused)."""
    return tp.sum(-1) / true.sum(-1)


def macro_f1_from_counts(
    tp: Float[Tensor, "*batch class"],
    true: Float[Tensor, "*batch class"],
    pred: Float[Tensor, "*batch class"],
) -> Float[Tensor, "*batch"]:
    """Macro-F1 from per-class counts: mean over the classes with true + pred > 0."""
    denom = true + pred  # 2tp + fp + fn
    present = denom > 0
    f1 = torch.where(present, 2 * tp / denom.clamp(min=1), 0.0)
    return f1.sum(-1) / present.sum(-1)


def mcc_from_counts(
    tp: Float[Tensor, "*batch class"],
    true: Float[Tensor, "*batch class"],
    pred: Float[Tensor, "*batch class"],
) -> Float[Tensor, "*batch"]:
    """Multiclass MCC from per-class counts; 0 when undefined, NaN with no item."""
    s = true.sum(-1)
    correct = tp.sum(-1)
    cov_tp = correct * s - (true * pred).sum(-1)
    cov_pp = s * s - (pred * pred).sum(-1)
    cov_tt = s * s - (true * true).sum(-1)
    denom = cov_pp * cov_tt
    out = torch.where(denom > 0, cov_tp / denom.clamp(min=1e-300).sqrt(), 0.0)
    return torch.where(s > 0, out, torch.nan)


def class_count_metrics(
    tp: Float[Tensor, "*batch class"],
    true: Float[Tensor, "*batch class"],
    pred: Float[Tensor, "*batch class"],
) -> dict[str, Float[Tensor, "*batch"]]:
    """accuracy, macro_f1, micro_f1, mcc from per-class counts (float64)."""
    acc = accuracy_from_counts(tp, true, pred)
    return {
        "accuracy": acc,
        "macro_f1": macro_f1_from_counts(tp, true, pred),
        "micro_f1": acc,
        "mcc": mcc_from_counts(tp, true, pred),
    }


def classification_metrics(
    pred: Int[Tensor, "probe item"],
    true: Int[Tensor, "probe item"],
    num_classes: int,
    include: Bool[Tensor, "probe item"] | None = None,
) -> dict[str, Float[Tensor, " probe"]]:
    """accuracy, macro_f1, micro_f1, mcc per probe."""
    return class_count_metrics(*class_counts(pred, true, num_classes, include))


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
    """micro_f1, macro_f1 (over all labels, 0 for a label never true nor predicted) and subset
    accuracy, as sklearn on indicator matrices."""
    w = torch.ones(pred.shape[:2], device=pred.device) if include is None else include.double()
    w = w.double()[..., None]
    tp = (pred & true).double().mul(w).sum(1)
    fp = (pred & ~true).double().mul(w).sum(1)
    fn = (~pred & true).double().mul(w).sum(1)
    exact = (pred == true).all(-1).double().mul(w[..., 0]).sum(-1)
    return multilabel_from_counts(tp, fp, fn, exact, w[..., 0].sum(-1))


def multilabel_from_counts(
    tp: Float[Tensor, "*batch label"],
    fp: Float[Tensor, "*batch label"],
    fn: Float[Tensor, "*batch label"],
    exact: Float[Tensor, "*batch"],
    n: Float[Tensor, "*batch"],
) -> dict[str, Float[Tensor, "*batch"]]:
    """micro_f1, macro_f1 and subset accuracy from per-label counts, exact-match count and n."""
    denom = 2 * tp + fp + fn
    f1 = torch.where(denom > 0, 2 * tp / denom.clamp(min=1), 0.0)
    d_micro = denom.sum(-1)
    micro = torch.where(d_micro > 0, 2 * tp.sum(-1) / d_micro.clamp(min=1), 0.0)
    empty = torch.where(n > 0, 0.0, torch.nan)
    return {
        "accuracy": exact / n,
        "macro_f1": f1.mean(-1) + empty,
        "micro_f1": micro + empty,
    }


def pearson(
    pred: Float[Tensor, "probe item"],
    true: Float[Tensor, "probe item"],
    include: Bool[Tensor, "probe item"] | None = None,
) -> Float[Tensor, " probe"]:
    """Pearson's r per probe (float64); NaN for fewer than 2 items or a constant input."""
    w = torch.ones_like(pred, dtype=torch.float64) if include is None else include.double()
    x, y = pred.double(), true.double()
    n = w.sum(-1, keepdim=True)
    dx = (x - (w * x).sum(-1, keepdim=True) / n) * w
    dy = (y - (w * y).sum(-1, keepdim=True) / n) * w
    zero = torch.zeros_like(n[:, 0])
    return pearson_from_sums(
        n[:, 0], zero, zero, (dx * dx).sum(-1), (dy * dy).sum(-1), (dx * dy).sum(-1)
    )


def pearson_from_sums(
    n: Float[Tensor, "*batch"],
    sx: Float[Tensor, "*batch"],
    sy: Float[Tensor, "*batch"],
    sxx: Float[Tensor, "*batch"],
    syy: Float[Tensor, "*batch"],
    sxy: Float[Tensor, "*batch"],
) -> Float[Tensor, "*batch"]:
    """Pearson's r from (weighted) count, sums, sums of squares and of products.

    Give sums of roughly centred values (cancellation); NaN for n < 2 or a constant input (a
    centred sum of squares at most 1e-10 of the raw one, i.e. rounding noise)."""
    cxx, cyy = sxx - sx * sx / n, syy - sy * sy / n
    cxy = sxy - sx * sy / n
    ok = (cxx > 1e-10 * sxx) & (cyy > 1e-10 * syy) & (n >= 2)
    r = cxy / (cxx * cyy).clamp(min=1e-300).sqrt()
    return torch.where(ok, r.clamp(-1.0, 1.0), torch.nan)


def regression_metrics(
    pred: Float[Tensor, "probe item"],
    true: Float[Tensor, "probe item"],
    include: Bool[Tensor, "probe item"] | None = None,
) -> dict[str, Float[Tensor, " probe"]]:
    """pearson and mse per probe."""
    w = torch.ones_like(pred, dtype=torch.float64) if include is None else include.double()
    mse = (w * (pred.double() - true.double()) ** 2).sum(-1) / w.sum(-1)
    return {"pearson": pearson(pred, true, include), "mse": mse}
