"""`fit_logistic_regression(penalty="l1")` gives scikit-learn's L1 logistic regression (saga),
and on sparse SAE-like latents it keeps the few latents the labels were planted on."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sklearn
import torch
from sklearn.linear_model import LogisticRegression

from lingprobe.feature_set import FeatureSet
from probes import ProbeInputError, fit_logistic_regression

TIGHT = {"tol": 1e-9, "max_iter": 20_000}
SKLEARN = tuple(int(part) for part in sklearn.__version__.split(".")[:2])


def sklearn_l1(x: np.ndarray, y: np.ndarray, c: float) -> LogisticRegression:
    # sklearn >= 1.8 spells penalty="l1" as l1_ratio=1 (and ignores l1_ratio before)
    l1 = {"l1_ratio": 1.0} if SKLEARN >= (1, 8) else {"penalty": "l1"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LogisticRegression(
            C=c, solver="saga", tol=1e-12, max_iter=200_000, random_state=0, **l1
        )
        return model.fit(x, y)


def latents(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """Nonnegative, mostly-zero features, as an SAE's ReLU latents are."""
    return np.maximum(rng.standard_normal((n, d)) - 0.5, 0.0)


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("c", [0.05, 0.3])
def test_equals_sklearn_saga_l1(k, c):
    rng = np.random.default_rng(k)
    x = latents(rng, 240, 30)
    score = 3.0 * x[:, 2] - 2.5 * x[:, 9] + 2.0 * x[:, 17] + 0.3 * rng.standard_normal(240)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, k + 1)[1:-1]))
    fitted = fit_logistic_regression(
        torch.tensor(x)[None], torch.tensor(y)[None], c, penalty="l1", **TIGHT
    )
    ours_coef, ours_bias = fitted.sklearn_params(0)
    theirs = sklearn_l1(x, y, c)
    assert bool(fitted.converged_[0])
    np.testing.assert_allclose(ours_coef, theirs.coef_, atol=2e-5)
    np.testing.assert_allclose(ours_bias, theirs.intercept_, atol=2e-5)
    np.testing.assert_array_equal(ours_coef != 0, theirs.coef_ != 0)  # the same support
    assert (ours_coef == 0).mean() > 0.3  # exact zeros, not small values


def test_planted_latents_are_recovered_per_probe():
    rng = np.random.default_rng(7)
    x = latents(rng, 600, 200)
    planted = [(5, 40, 123), (7, 88, 150)]
    labels = []
    for a, b, c in planted:
        score = 2.0 * x[:, a] + 2.0 * x[:, b] - 2.0 * x[:, c] + 0.2 * rng.standard_normal(600)
        labels.append((score > np.median(score)).astype(np.int64))
    y = torch.tensor(np.stack(labels))  # two probes reading one feature block
    fitted = fit_logistic_regression(torch.tensor(x)[None], y, 0.05, penalty="l1", **TIGHT)
    for p, chosen in enumerate(planted):
        coef = fitted.sklearn_params(p)[0][0]
        assert set(np.flatnonzero(coef).tolist()) == set(chosen)  # those 3 of 200 latents only
        np.testing.assert_allclose(coef, sklearn_l1(x, labels[p], 0.05).coef_[0], atol=2e-5)
    plain = fit_logistic_regression(torch.tensor(x)[None], y, 0.05, **TIGHT)
    assert np.count_nonzero(plain.sklearn_params(0)[0]) == 200  # L2 keeps every latent


def test_float32_with_polish_reaches_the_float64_solution():
    rng = np.random.default_rng(3)
    x = latents(rng, 200, 20)
    y = (x[:, 0] - x[:, 1] > 0).astype(np.int64)
    args = (torch.tensor(y)[None], 0.2)
    exact = fit_logistic_regression(torch.tensor(x)[None], *args, penalty="l1", **TIGHT)
    polished = fit_logistic_regression(
        torch.tensor(x, dtype=torch.float32)[None], *args, penalty="l1", polish=True, **TIGHT
    )
    torch.testing.assert_close(polished.coef_, exact.coef_, atol=1e-6, rtol=0)


def test_zero_c_is_refused():
    x = torch.randn(1, 10, 3, generator=torch.Generator().manual_seed(0))
    with pytest.raises(ProbeInputError, match=r"C=0.0"):
        fit_logistic_regression(x, torch.arange(10)[None] % 2, 0.0, penalty="l1")


def test_feature_set_equals_tensor(tmp_path):
    rng = np.random.default_rng(11)
    x = latents(rng, 120, 12).astype(np.float32)
    x2 = latents(rng, 120, 12).astype(np.float32)
    y = torch.tensor((x[:, 0] + x2[:, 1] > 0.5).astype(np.int64))[None].repeat(2, 1)
    both = torch.tensor(np.stack([x, x2], axis=1))  # [item, site, dim]
    fs = FeatureSet.write(tmp_path / "fs", [both[:50], both[50:]], ["a", "b"], shard_size=50)
    options = {"penalty": "l1", "tol": 1e-6, "max_iter": 5000}
    from_disk = fit_logistic_regression(fs, y, 0.2, **options)
    in_memory = fit_logistic_regression(both.transpose(0, 1).contiguous(), y, 0.2, **options)
    torch.testing.assert_close(from_disk.coef_, in_memory.coef_, atol=0, rtol=0)
