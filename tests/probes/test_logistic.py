"""The batched L-BFGS logistic-regression fitter gives scikit-learn's LogisticRegression(C=C)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from probes import ProbeConfigError, ProbeInputError, fit_logistic_regression

TIGHT = {"tol": 1e-10, "max_iter": 10_000}


def problem(rng: np.random.Generator, n: int, d: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    means = rng.standard_normal((k, d))
    y = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])  # every class present
    x = rng.standard_normal((n, d)) + means[y] * rng.uniform(0.3, 2.0)
    return x, y


def sklearn_fit(x: np.ndarray, y: np.ndarray, c: float, **kw: float) -> LogisticRegression:
    return LogisticRegression(C=c, **kw).fit(x, y)


def assert_same_model(lr, probe: int, sk: LogisticRegression, x: np.ndarray, classes) -> None:
    xt = torch.as_tensor(x)[None]
    proba = lr.predict_proba(xt)[0].numpy() if lr.coef_.shape[0] == 1 else None
    if proba is None:
        groups = lr.coef_.shape[0]
        proba = lr.predict_proba(xt.expand(groups, -1, -1))[probe].numpy()
    np.testing.assert_allclose(proba[:, classes], sk.predict_proba(x), atol=1e-4)
    assert np.abs(np.delete(proba, classes, axis=1)).max(initial=0) == 0
    np.testing.assert_array_equal(np.asarray(classes)[proba[:, classes].argmax(1)], sk.predict(x))
    coef, intercept = lr.sklearn_params(probe)
    assert coef.shape == sk.coef_.shape
    assert np.abs(coef - sk.coef_).max() <= 1e-3 * np.abs(sk.coef_).max()
    assert np.abs(intercept - sk.intercept_).max() <= 1e-3 * max(1.0, np.abs(sk.intercept_).max())


@pytest.mark.parametrize("case", range(12))
def test_random_problems_equal_sklearn(case: int) -> None:
    rng = np.random.default_rng(case)
    n, d = int(rng.integers(40, 400)), int(rng.integers(2, 40))
    k = [2, 3, 20, 2, 5, 11, 4, 2, 7, 16, 3, 9][case]
    c = float(10 ** rng.uniform(-2, 1.5))
    x, y = problem(rng, max(n, 2 * k), d, k)
    sk = sklearn_fit(x, y, c, **TIGHT)
    lr = fit_logistic_regression(torch.as_tensor(x)[None], torch.as_tensor(y)[None], c, **TIGHT)
    assert_same_model(lr, 0, sk, x, list(range(k)))


def test_batched_probes_sharing_features_equal_sklearn_each() -> None:
    rng = np.random.default_rng(0)
    x1, y1 = problem(rng, 200, 6, 4)
    x2, _ = problem(rng, 200, 6, 4)
    labels = [y1, rng.permutation(y1), rng.integers(0, 4, 200), y1 % 2]  # 4, 4, 4 and 2 classes
    ys = torch.as_tensor(np.stack(labels + labels[::-1]))  # 8 probes, 4 per feature block
    xs = torch.as_tensor(np.stack([x1, x2]))
    lr = fit_logistic_regression(xs, ys, 0.5, **TIGHT)
    for probe in range(8):
        x = [x1, x2][probe // 4]
        y = ys[probe].numpy()
        sk = sklearn_fit(x, y, 0.5, **TIGHT)
        proba = lr.predict_proba(xs)[probe].numpy()
        present = np.unique(y)
        np.testing.assert_allclose(proba[:, present], sk.predict_proba(x), atol=1e-4)
        coef, _ = lr.sklearn_params(probe)
        assert np.abs(coef - sk.coef_).max() <= 1e-3 * np.abs(sk.coef_).max()
    assert (lr.score(xs, ys) >= 0).all()


def test_absent_classes_get_probability_zero_and_binary_uses_the_sigmoid() -> None:
    rng = np.random.default_rng(3)
    x, y = problem(rng, 150, 5, 3)
    remap = np.array([0, 2, 4])[y]  # classes 0, 2, 4 of 6
    binary = np.array([1, 3])[y % 2]  # classes 1 and 3 of 6
    xs = torch.as_tensor(x)[None]
    lr = fit_logistic_regression(
        xs, torch.as_tensor(np.stack([remap, binary])), 2.0, num_classes=6, **TIGHT
    )
    for probe, labels in enumerate([remap, binary]):
        sk = sklearn_fit(x, labels, 2.0, **TIGHT)
        assert_same_model(lr, probe, sk, x, list(sk.classes_))
    assert lr.classes_.tolist() == [
        [True, False, True, False, True, False],
        [False, True, False, True, False, False],
    ]
    assert float(lr.coef_[1, 1].abs().sum()) == 0.0  # binary: first class's row is 0


def objective(x: np.ndarray, y: np.ndarray, coef: np.ndarray, b: np.ndarray, c: float) -> float:
    """sklearn's lbfgs objective: mean log-loss + ||W||^2 / (2 C n)."""
    if coef.shape[0] == 1:
        z = x @ coef[0] + b[0]
        loss = np.logaddexp(0, z) - (y == y.max()) * z
    else:
        z = x @ coef.T + b
        loss = np.logaddexp.reduce(z, axis=1) - z[np.arange(len(y)), y]
    return float(loss.mean() + (coef**2).sum() / (2 * c * len(y)))


def test_default_settings_reach_sklearn_optimum() -> None:
    rng = np.random.default_rng(7)
    x, y = problem(rng, 300, 12, 5)
    sk = sklearn_fit(x, y, 1.0)
    lr = fit_logistic_regression(torch.as_tensor(x)[None], torch.as_tensor(y)[None], 1.0)
    coef, b = lr.sklearn_params(0)
    ours, theirs = objective(x, y, coef, b, 1.0), objective(x, y, sk.coef_, sk.intercept_, 1.0)
    assert ours == pytest.approx(float(lr.objective_[0]), rel=1e-9)
    assert ours <= theirs + 1e-6
    assert bool(lr.converged_[0]) and int(lr.n_iter_[0]) <= 100


def test_warm_start_reaches_the_same_model() -> None:
    rng = np.random.default_rng(11)
    x, y = problem(rng, 120, 4, 3)
    xs, ys = torch.as_tensor(x)[None], torch.as_tensor(y)[None]
    cold = fit_logistic_regression(xs, ys, 1.0, **TIGHT)
    warm = fit_logistic_regression(xs * 1.01, ys, 1.0, init=cold, **TIGHT)
    again = fit_logistic_regression(xs, ys, 1.0, init=warm, **TIGHT)
    torch.testing.assert_close(again.coef_, cold.coef_, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(again.intercept_, cold.intercept_, atol=1e-6, rtol=1e-6)
    assert int(again.n_iter_[0]) < int(cold.n_iter_[0])


def test_float32_fast_path_and_float64_polish() -> None:
    rng = np.random.default_rng(5)
    x, y = problem(rng, 500, 16, 6)
    x64, ys = torch.as_tensor(x)[None], torch.as_tensor(y)[None]
    sk = sklearn_fit(x, y, 1.0, **TIGHT)
    lr32 = fit_logistic_regression(x64.float(), ys, 1.0, tol=1e-6)
    assert bool(lr32.converged_[0])  # stops where float32 cannot decrease f any more
    np.testing.assert_allclose(lr32.predict_proba(x64)[0].numpy(), sk.predict_proba(x), atol=5e-3)
    polished = fit_logistic_regression(x64.float(), ys, 1.0, polish=True, **TIGHT)
    assert_same_model(polished, 0, sk, x, list(range(6)))


def test_bad_input_errors() -> None:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(1, 10, 3, generator=gen)
    y = torch.tensor([[0, 1] * 5])
    with pytest.raises(ProbeInputError, match="single class"):
        fit_logistic_regression(x, torch.zeros(1, 10, dtype=torch.int64))
    with pytest.raises(ProbeInputError, match="labels must lie in"):
        fit_logistic_regression(x, y, num_classes=1)
    with pytest.raises(ProbeInputError, match="feature blocks"):
        fit_logistic_regression(torch.randn(2, 10, 3, generator=gen), y.expand(3, -1))
    with pytest.raises(ProbeInputError, match="NaN or inf"):
        fit_logistic_regression(x.index_fill(1, torch.tensor([4]), float("nan")), y)
    with pytest.raises((ProbeInputError, TypeError)):  # TypeError: the tests' jaxtyping hook
        fit_logistic_regression(x, y[:, :9])


def test_results_do_not_depend_on_the_worker_threads() -> None:
    rng = np.random.default_rng(2)
    x, y = problem(rng, 9000, 8, 4)  # three row blocks
    xs = torch.as_tensor(x, dtype=torch.float32)[None].expand(2, -1, -1)
    ys = torch.as_tensor(np.stack([y, rng.permutation(y), y % 2, y]))
    before = torch.get_num_threads()
    fits = [fit_logistic_regression(xs, ys, 1.0, threads=t) for t in (1, 3)]
    assert torch.get_num_threads() == before  # the caller's setting is restored
    assert torch.equal(fits[0].coef_, fits[1].coef_)
    assert torch.equal(fits[0].n_iter_, fits[1].n_iter_)
    with pytest.raises(ProbeConfigError, match="threads=0"):
        fit_logistic_regression(xs, ys, threads=0)
