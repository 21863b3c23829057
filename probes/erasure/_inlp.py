"""INLP: iterative nullspace projection (Ravfogel et al. 2020, Algorithm 1), every site at once.

Each iteration fits one L2 logistic regression per site (`fit_logistic_regression`, all sites in
one batched call) on the features projected off everything removed so far, and removes the span
of its weight rows (centred over the classes: the directions a softmax depends on). The final
projection is onto the intersection of the classifiers' nullspaces, `I - orth(sum_i P_{R(W_i)})`
(debias.py `get_projection_to_intersection_of_nullspaces`). A site stops once its classifier is
no better on dev than the majority class plus `margin` (that classifier is not removed; amnesic
probing, Elazar et al. 2021, runs INLP until the concept is at majority level).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
import torch
from jaxtyping import Float, Int
from torch import Tensor

from lingprobe.feature_set import FeatureSet
from probes._grid.inputs import check_features
from probes.erasure._leace import AffineEraser, _one_hot, orthogonal_eraser
from probes.errors import ProbeInputError
from probes.logistic import fit_logistic_regression
from probes.splits import DEV, TRAIN, Splits, split_codes


@dataclass
class InlpResult:
    """The INLP eraser and, per site and iteration, dev accuracy and the rank removed so far."""

    eraser: AffineEraser
    history: pl.DataFrame


def fit_inlp(
    feats: Float[Tensor, "item site dim"] | FeatureSet,
    concept: Int[Tensor, " item"],
    splits: Splits | Tensor | np.ndarray,
    *,
    iterations: int = 20,
    C: float = 1.0,
    margin: float = 0.01,
    num_classes: int | None = None,
    tol: float = 1e-4,
    max_iter: int = 100,
    device: torch.device | str | None = None,
) -> InlpResult:
    """Up to `iterations` rounds of classifier-then-nullspace at every site of `feats`.

    Classifiers train on the train items and are judged on dev (one split code per item).
    The computation runs in the features' dtype (float64 for exact agreement with scikit-learn;
    a `FeatureSet` is read once, its train and dev items, in float32).
    """
    if isinstance(feats, Tensor):
        check_features(feats)
    if iterations < 1:
        raise ProbeInputError(f"iterations={iterations}: run at least one INLP iteration.")
    n, sites, d = feats.shape
    k = _one_hot(concept, n, num_classes).shape[1]
    codes = split_codes(splits, n)
    train, dev = (codes == TRAIN).nonzero().flatten(), (codes == DEV).nonzero().flatten()
    if len(train) == 0 or len(dev) == 0:
        raise ProbeInputError("splits: INLP trains on train items and stops on dev; give both.")
    y = torch.as_tensor(concept).long().cpu()
    majority = float(torch.bincount(y[dev], minlength=k).max()) / len(dev)
    x_train = _rows(feats, train).transpose(0, 1)
    x_dev = _rows(feats, dev).transpose(0, 1)
    dtype = x_train.dtype
    bases = [torch.zeros(d, 0, dtype=dtype) for _ in range(sites)]
    active = list(range(sites))
    rows = []
    for step in range(1, iterations + 1):
        keep = [torch.eye(d, dtype=dtype) - b @ b.T for b in (bases[s] for s in active)]
        proj = torch.stack(keep)
        fit = fit_logistic_regression(
            torch.bmm(x_train[active], proj),
            y[train].expand(len(active), -1),
            C,
            num_classes=k,
            tol=tol,
            max_iter=max_iter,
            device=device,
        )
        acc = fit.score(torch.bmm(x_dev[active], proj), y[dev].expand(len(active), -1))
        still = []
        for i, s in enumerate(active):
            above = float(acc[i]) > majority + margin
            if above:
                rowspace = _orth(_identified_rows(fit.coef_[i], fit.classes_[i]).to(dtype).T)
                bases[s] = _orth(torch.cat([bases[s], rowspace], dim=1))
                still.append(s)
            rows.append((s, step, float(acc[i]), majority, bases[s].shape[1], above))
        active = still
        if not active:
            break
    width = max(b.shape[1] for b in bases)
    padded = torch.stack([torch.nn.functional.pad(b, (0, width - b.shape[1])) for b in bases])
    used = torch.arange(width)[None, :] < torch.tensor([b.shape[1] for b in bases])[:, None]
    history = pl.DataFrame(
        rows,
        schema={
            "site": pl.Int64,
            "iteration": pl.Int64,
            "dev_accuracy": pl.Float64,
            "majority": pl.Float64,
            "rank": pl.Int64,
            "removed": pl.Boolean,
        },
        orient="row",
    )
    return InlpResult(orthogonal_eraser(padded, used, "inlp"), history)


def _rows(
    feats: Float[Tensor, "item site dim"] | FeatureSet, items: Int[Tensor, " row"]
) -> Float[Tensor, "row site dim"]:
    """The features of `items` (a `FeatureSet`'s read, float32, checked finite)."""
    if isinstance(feats, Tensor):
        return feats[items]
    x = feats.read(items=items)
    check_features(x, "feats (FeatureSet)")
    return x


def _identified_rows(coef: Float[Tensor, "class dim"], seen: Tensor) -> Float[Tensor, "row dim"]:
    """The weight rows a classifier's predictions depend on: a softmax over 3+ classes is
    unchanged by adding one vector to every row, so its rows are centred (over the classes it
    saw); a binary classifier is its one row."""
    rows = coef[seen]
    if rows.shape[0] <= 2:
        return rows[-1:]
    return rows - rows.mean(0, keepdim=True)


def _orth(a: Float[Tensor, "dim col"]) -> Float[Tensor, "dim basis"]:
    """An orthonormal basis of the column space (scipy.linalg.orth's cutoff)."""
    if a.shape[1] == 0:
        return a
    u, s, _ = torch.linalg.svd(a, full_matrices=False)
    cutoff = max(a.shape) * torch.finfo(a.dtype).eps * float(s.max()) if s.numel() else 0.0
    return u[:, s > cutoff]
