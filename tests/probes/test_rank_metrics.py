"""AUROC and recall at a false-positive rate against scikit-learn and hand computations."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics import roc_auc_score, roc_curve

from probes.errors import ProbeConfigError
from probes.rank_metrics import (
    RankedRows,
    jackknife_auroc,
    jackknife_recall_at_fpr,
    rank_metrics,
    weighted_auroc,
    weighted_recall_at_fpr,
)


def _recall_reference(y: np.ndarray, s: np.ndarray, fpr: float) -> float:
    """max tpr over the ROC points with fpr <= alpha (sklearn's curve, every threshold)."""
    f, t, _ = roc_curve(y, s, drop_intermediate=False)
    return float(t[f <= fpr].max())


def _probs(gen: torch.Generator, p: int, n: int, k: int, levels: int) -> torch.Tensor:
    """Probabilities with many exact ties: whole-number weights 1..levels over their sum
    (equal ratios give equal floats, as division rounds correctly)."""
    w = torch.randint(1, levels + 1, (p, n, k), generator=gen).double()
    return w / w.sum(-1, keepdim=True)


@pytest.mark.parametrize("levels", [3, 1000])
def test_binary_auroc_and_recall_match_sklearn(levels: int) -> None:
    gen = torch.Generator().manual_seed(levels)
    probs = _probs(gen, 5, 60, 2, levels)
    truth = torch.randint(0, 2, (5, 60), generator=gen)
    out = rank_metrics(probs.log(), truth, fpr=0.1)
    for p in range(5):
        y, s = truth[p].numpy(), probs[p, :, 1].numpy()
        assert out["auroc"][0, p].item() == pytest.approx(roc_auc_score(y, s), abs=1e-12)
        assert out["recall_at_fpr"][0, p].item() == pytest.approx(
            _recall_reference(y, s, 0.1), abs=1e-12
        )


@pytest.mark.parametrize("levels", [2, 1000])
def test_multiclass_auroc_matches_sklearn_ovr_macro(levels: int) -> None:
    gen = torch.Generator().manual_seed(7)
    probs = _probs(gen, 4, 80, 5, levels)
    truth = torch.randint(0, 5, (4, 80), generator=gen)
    out = rank_metrics(probs.log(), truth, fpr=0.05)
    for p in range(4):
        y, ps = truth[p].numpy(), probs[p].numpy()
        ref = roc_auc_score(y, ps, multi_class="ovr", average="macro")
        assert out["auroc"][0, p].item() == pytest.approx(ref, abs=1e-12)
        recalls = [_recall_reference(y == c, ps[:, c], 0.05) for c in range(5)]
        assert out["recall_at_fpr"][0, p].item() == pytest.approx(np.mean(recalls), abs=1e-12)


def test_recall_by_hand() -> None:
    # descending scores 0.9(+) 0.8(-) 0.7(+) 0.7(-) 0.6(+) 0.1(-): 3 positives, 3 negatives.
    # thresholds: 0.9 -> FP 0, TP 1; 0.8 -> FP 1, TP 1; 0.7 -> FP 2, TP 2; 0.6 -> FP 2, TP 3.
    s = torch.tensor([[0.9, 0.8, 0.7, 0.7, 0.6, 0.1]])
    y = torch.tensor([[True, False, True, False, True, False]])
    ranked = RankedRows.of(s, y)
    ones = torch.ones(1, 6)
    assert weighted_recall_at_fpr(ranked, ones, 0.0).item() == pytest.approx(1 / 3)
    assert weighted_recall_at_fpr(ranked, ones, 0.34).item() == pytest.approx(1 / 3)
    assert weighted_recall_at_fpr(ranked, ones, 2 / 3).item() == pytest.approx(1.0)
    # the tie at 0.7 is one threshold: positive and negative enter together
    # pairs won: 0.9 beats 3 negatives, 0.7 beats 1 and ties 1, 0.6 beats 1 -> 5.5 / 9
    assert weighted_auroc(ranked, ones).item() == pytest.approx(5.5 / 9)


def test_weights_equal_the_resampled_items() -> None:
    gen = torch.Generator().manual_seed(3)
    s = torch.randint(0, 6, (3, 40), generator=gen).double()
    y = torch.rand(3, 40, generator=gen) < 0.4
    idx = torch.randint(0, 40, (5, 40), generator=gen)
    counts = torch.zeros(5, 40).scatter_add_(1, idx, torch.ones(5, 40))
    ranked = RankedRows.of(s, y)
    auc, rec = weighted_auroc(ranked, counts), weighted_recall_at_fpr(ranked, counts, 0.2)
    for b in range(5):
        for r in range(3):
            ys, ss = y[r, idx[b]].numpy(), s[r, idx[b]].numpy()
            assert auc[b, r].item() == pytest.approx(roc_auc_score(ys, ss), abs=1e-12)
            assert rec[b, r].item() == pytest.approx(_recall_reference(ys, ss, 0.2), abs=1e-12)


@pytest.mark.parametrize("fpr", [0.0, 0.1, 0.25])
def test_jackknife_equals_leaving_each_item_out(fpr: float) -> None:
    gen = torch.Generator().manual_seed(11)
    s = torch.randint(0, 5, (4, 30), generator=gen).double()
    y = torch.rand(4, 30, generator=gen) < 0.5
    y[3] = False
    y[3, 0] = True  # one positive: leaving it out leaves AUROC undefined
    ranked = RankedRows.of(s, y)
    leave_out = 1 - torch.eye(30, dtype=torch.float64)
    torch.testing.assert_close(
        jackknife_auroc(ranked), weighted_auroc(ranked, leave_out).T, equal_nan=True
    )
    torch.testing.assert_close(
        jackknife_recall_at_fpr(ranked, fpr),
        weighted_recall_at_fpr(ranked, leave_out, fpr).T,
        equal_nan=True,
    )


def test_undefined_cases_are_nan() -> None:
    scores = torch.zeros(2, 4, 3).log_softmax(-1)
    scores[1, 0, 0] = torch.nan
    truth = torch.tensor([[0, 0, 0, 0], [0, 1, 2, 0]])
    out = rank_metrics(scores, truth)
    assert out["auroc"].isnan().all()  # one class only; a NaN score
    with pytest.raises(ProbeConfigError, match="fpr"):
        rank_metrics(scores, truth, fpr=1.5)
