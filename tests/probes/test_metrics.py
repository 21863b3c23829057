"""Batched metrics equal sklearn's and scipy's on every probe."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import pearsonr
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

from probes import classification_metrics, multilabel_metrics, pearson, regression_metrics


def sklearn_classification(true: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "accuracy": accuracy_score(true, pred),
            "macro_f1": f1_score(true, pred, average="macro"),
            "micro_f1": f1_score(true, pred, average="micro"),
            "mcc": matthews_corrcoef(true, pred),
        }


@st.composite
def class_problems(draw: st.DrawFn) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Several probes of labels and predictions; some classes never predicted or never true,
    some probes with a constant prediction."""
    k = draw(st.integers(2, 7))
    p = draw(st.integers(1, 4))
    n = draw(st.integers(1, 30))
    labels = st.lists(st.integers(0, k - 1), min_size=n, max_size=n)
    true = torch.tensor([draw(labels) for _ in range(p)])
    pred = torch.tensor([draw(labels) for _ in range(p)])
    if draw(st.booleans()):
        pred[0] = draw(st.integers(0, k - 1))  # constant prediction
    if draw(st.booleans()):
        pred[pred == k - 1] = 0  # a class never predicted
    return pred, true, k


@settings(max_examples=60, deadline=None)
@given(class_problems())
def test_classification_metrics_equal_sklearn(problem: tuple) -> None:
    pred, true, k = problem
    got = classification_metrics(pred, true, k)
    for probe in range(pred.shape[0]):
        want = sklearn_classification(true[probe].numpy(), pred[probe].numpy())
        for name, value in want.items():
            assert float(got[name][probe]) == pytest.approx(value, abs=1e-12), name


@settings(max_examples=30, deadline=None)
@given(class_problems(), st.integers(0, 2**31 - 1))
def test_include_mask_equals_metrics_on_the_subset(problem: tuple, seed: int) -> None:
    pred, true, k = problem
    gen = torch.Generator().manual_seed(seed)
    include = torch.rand(pred.shape, generator=gen) < 0.6
    got = classification_metrics(pred, true, k, include)
    for probe in range(pred.shape[0]):
        keep = include[probe]
        if not bool(keep.any()):
            assert math.isnan(float(got["accuracy"][probe]))
            continue
        want = sklearn_classification(true[probe][keep].numpy(), pred[probe][keep].numpy())
        for name, value in want.items():
            assert float(got[name][probe]) == pytest.approx(value, abs=1e-12), name


def test_constant_prediction_and_missing_classes_by_hand() -> None:
    true = torch.tensor([[0, 1, 2, 2]])
    pred = torch.tensor([[2, 2, 2, 2]])
    got = classification_metrics(pred, true, 5)
    # F1 of class 2 = 2*2/(2*2+2+0) = 2/3; classes 0 and 1 (true, never predicted) 0; 3, 4 absent.
    assert float(got["macro_f1"][0]) == pytest.approx((2 / 3) / 3)
    assert float(got["mcc"][0]) == 0.0
    assert float(got["accuracy"][0]) == 0.5


def test_an_outlier_class_id_costs_memory_linear_in_the_classes() -> None:
    """Ids 0..3 and 49,999: K = 50,000 classes would be a 20 GB confusion table per probe; the
    metrics need only [probe, class] counts, and equal sklearn's."""
    gen = torch.Generator().manual_seed(0)
    true = torch.randint(0, 4, (4, 40), generator=gen)
    true[:, 7] = 49_999
    pred = torch.where(torch.rand(true.shape, generator=gen) < 0.7, true, (true + 1) % 4)
    got = classification_metrics(pred, true, 50_000)
    for probe in range(4):
        want = sklearn_classification(true[probe].numpy(), pred[probe].numpy())
        for name, value in want.items():
            assert float(got[name][probe]) == pytest.approx(value, abs=1e-12), name


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 25), st.integers(2, 5), st.integers(0, 2**31 - 1))
def test_multilabel_metrics_equal_sklearn(p: int, n: int, k: int, seed: int) -> None:
    """(sklearn reads a single label column as a binary task, so k >= 2.)"""
    gen = torch.Generator().manual_seed(seed)
    true = torch.rand(p, n, k, generator=gen) < 0.3
    pred = torch.rand(p, n, k, generator=gen) < 0.3
    got = multilabel_metrics(pred, true)
    for probe in range(p):
        t, q = true[probe].numpy(), pred[probe].numpy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = {
                "accuracy": accuracy_score(t, q),
                "micro_f1": f1_score(t, q, average="micro"),
                "macro_f1": f1_score(t, q, average="macro"),
            }
        for name, value in want.items():
            assert float(got[name][probe]) == pytest.approx(value, abs=1e-12), name


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 40), st.integers(0, 2**31 - 1), st.booleans())
def test_pearson_equals_scipy(n: int, seed: int, constant: bool) -> None:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(3, n, generator=gen)
    y = x * torch.tensor([[1.0], [-0.5], [0.0]]) + torch.randn(3, n, generator=gen)
    if constant:
        x[1] = 0.25  # a constant prediction: scipy says NaN
    got = pearson(x, y)
    for probe in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = pearsonr(x[probe].double().numpy(), y[probe].double().numpy()).statistic
        if math.isnan(want):
            assert math.isnan(float(got[probe]))
        else:
            assert float(got[probe]) == pytest.approx(want, abs=1e-6)


def test_regression_metrics_mse_and_too_few_items() -> None:
    pred = torch.tensor([[1.0, 2.0, 4.0], [0.0, 0.0, 0.0]])
    true = torch.tensor([[1.0, 3.0, 5.0], [1.0, 2.0, 3.0]])
    include = torch.tensor([[True, True, True], [True, False, False]])
    got = regression_metrics(pred, true, include)
    assert got["mse"].tolist() == pytest.approx([2 / 3, 1.0])
    assert math.isnan(float(got["pearson"][1]))
