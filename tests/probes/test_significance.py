"""Paired tests: permutation p-values equal scipy.stats.permutation_test, calibrated nulls, Holm.

scipy gets each item's outcome as one integer code (target and prediction, of every seed of a
side), so its "samples" permutations swap exactly what ours swap. With n_resamples ≥ 2^n both
enumerate every swap pattern and the p-values agree to rounding; with random patterns they
agree within Monte-Carlo error.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

from probes.significance import p_values
from probes.stats import (
    ItemResamples,
    Replicates,
    SwapPatterns,
    bootstrap_p_values,
    bootstrap_probes,
    holm_bonferroni,
    permutation_test,
)
from tests.probes.test_bootstrap import K, np_accuracy, np_macro_f1, np_mcc

NP_METRICS = {"accuracy": np_accuracy, "macro_f1": np_macro_f1, "mcc": np_mcc}


def scipy_p(data, statistic, n_resamples: int, alternative: str = "two-sided") -> float:
    res = stats.permutation_test(
        data,
        statistic,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative=alternative,
        rng=np.random.default_rng(0),
    )
    return float(res.pvalue)


def outcomes(rng: np.random.Generator, n: int, keep: float, truth: np.ndarray) -> np.ndarray:
    return np.where(rng.random(n) < keep, truth, rng.integers(0, K, n))


def run_test(pairs_l, pairs_r, weights, n_resamples, metrics, **kwargs):
    """Our permutation test on numpy (pred, truth) pairs of shape [pair, item]."""
    as_t = [tuple(torch.from_numpy(np.stack(x)) for x in side) for side in (pairs_l, pairs_r)]
    n = as_t[0][0].shape[1]
    return permutation_test(
        as_t[0],
        as_t[1],
        torch.tensor(weights, dtype=torch.float64),
        SwapPatterns(n, n_resamples, 0),
        head="classification",
        outputs=K,
        metrics=metrics,
        **kwargs,
    )


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_p_values_equal_scipy_for_class_metrics(alternative: str) -> None:
    rng = np.random.default_rng(0)
    n = 10  # 1024 swap patterns: both enumerate them all
    truth = rng.integers(0, K, n)
    control = rng.integers(0, K, n)  # task against control: the targets differ by side
    left, right = outcomes(rng, n, 0.8, truth), outcomes(rng, n, 0.4, control)
    got = run_test(
        ([left], [truth]),
        ([right], [control]),
        [[1.0]],
        2000,
        list(NP_METRICS),
        alternative=alternative,
    )
    for metric, fn in NP_METRICS.items():

        def statistic(a, b, axis=-1, fn=fn):
            return fn(a // K, a % K) - fn(b // K, b % K)

        want = scipy_p((truth * K + left, control * K + right), statistic, 2000, alternative)
        observed, p = got[metric]
        assert float(observed[0]) == pytest.approx(fn(truth, left) - fn(control, right))
        assert float(p[0]) == pytest.approx(want, abs=1e-12), metric


def test_seed_pairs_swap_together_as_in_scipy() -> None:
    """Two seeds per side: the difference of seed means, each item swapping both seeds."""
    rng = np.random.default_rng(1)
    n = 11
    truth = rng.integers(0, K, n)
    left = [outcomes(rng, n, 0.75, truth) for _ in range(2)]
    right = [outcomes(rng, n, 0.5, truth) for _ in range(2)]
    got = run_test((left, [truth] * 2), (right, [truth] * 2), [[0.5, 0.5]], 4096, ["macro_f1"])
    packed_l, packed_r = left[0] * K + left[1], right[0] * K + right[1]

    def statistic(a, b, axis=-1):
        mean = [np_macro_f1(truth, x // K) + np_macro_f1(truth, x % K) for x in (a, b)]
        return (mean[0] - mean[1]) / 2

    want = scipy_p((packed_l, packed_r), statistic, 4096)
    assert float(got["macro_f1"][1][0]) == pytest.approx(want, abs=1e-12)


def test_exact_p_values_equal_scipy_for_labels_and_values() -> None:
    rng = np.random.default_rng(2)
    n = 9
    y = rng.normal(size=n)
    a, b = ((y + rng.normal(size=n) * s).astype(np.float32) for s in (0.5, 1.5))
    got = permutation_test(
        (torch.from_numpy(a)[None], torch.from_numpy(y)[None]),
        (torch.from_numpy(b)[None], torch.from_numpy(y)[None]),
        torch.ones(1, 1, dtype=torch.float64),
        SwapPatterns(n, 1000, 0),
        head="regression",
        outputs=1,
        metrics=["pearson", "mse"],
    )
    a64, b64 = a.astype(np.float64), b.astype(np.float64)

    def pearson_diff(u, v, axis=-1):
        r = [stats.pearsonr(x, np.broadcast_to(y, x.shape), axis=-1).statistic for x in (u, v)]
        return r[0] - r[1]

    def mse_diff(u, v, axis=-1):
        return ((u - y) ** 2).mean(-1) - ((v - y) ** 2).mean(-1)

    assert float(got["pearson"][1][0]) == pytest.approx(scipy_p((a64, b64), pearson_diff, 1000))
    assert float(got["mse"][1][0]) == pytest.approx(scipy_p((a64, b64), mse_diff, 1000))
    truth = rng.random((n, 3)) < 0.5
    guess = [truth ^ (rng.random((n, 3)) < q) for q in (0.1, 0.4)]
    got = permutation_test(
        (torch.from_numpy(guess[0])[None], torch.from_numpy(truth)[None]),
        (torch.from_numpy(guess[1])[None], torch.from_numpy(truth)[None]),
        torch.ones(1, 1, dtype=torch.float64),
        SwapPatterns(n, 1000, 0),
        head="multilabel",
        outputs=3,
        metrics=["accuracy"],
    )
    bits = 2 ** np.arange(3)
    codes = [(g * bits).sum(1) for g in guess]
    exact = (truth * bits).sum(1)

    def subset_accuracy_diff(u, v, axis=-1):
        return (u == exact).mean(-1) - (v == exact).mean(-1)

    assert float(got["accuracy"][1][0]) == pytest.approx(
        scipy_p((codes[0], codes[1]), subset_accuracy_diff, 1000), abs=1e-12
    )


def test_random_patterns_agree_with_scipy_within_monte_carlo_error() -> None:
    rng = np.random.default_rng(3)
    n, n_resamples = 60, 5000
    truth = rng.integers(0, K, n)
    left, right = outcomes(rng, n, 0.75, truth), outcomes(rng, n, 0.6, truth)
    got = float(
        run_test(([left], [truth]), ([right], [truth]), [[1.0]], n_resamples, ["accuracy"])[
            "accuracy"
        ][1][0]
    )

    def statistic(a, b, axis=-1):
        return np_accuracy(truth, a) - np_accuracy(truth, b)

    want = scipy_p((left, right), statistic, n_resamples)
    assert 0.005 < want < 0.9  # a p-value that Monte-Carlo error can move
    assert abs(got - want) <= 4 * math.sqrt(2 * want * (1 - want) / n_resamples)


def test_false_positive_rate_under_the_null_is_3_to_7_percent() -> None:
    """500 pairs of probes with the same accuracy (0.7) on 200 items each, seeded."""
    gen = torch.Generator().manual_seed(21)
    draws, n = 500, 200
    truth = torch.randint(0, 4, (draws, n), generator=gen)

    def probe() -> torch.Tensor:
        correct = torch.rand(draws, n, generator=gen) < 0.7
        wrong = (truth + 1 + torch.randint(0, 3, (draws, n), generator=gen)) % 4
        return torch.where(correct, truth, wrong)

    a, b = probe(), probe()
    eye = torch.eye(draws, dtype=torch.float64)
    _, p_perm = permutation_test(
        (a, truth),
        (b, truth),
        eye,
        SwapPatterns(n, 999, 0),
        head="classification",
        outputs=4,
        metrics=["accuracy"],
    )["accuracy"]
    reps = bootstrap_probes(
        torch.cat([a, b]),
        torch.cat([truth, truth]),
        ItemResamples(n, 999, 0),
        head="classification",
        outputs=4,
        metrics=["accuracy"],
    )["accuracy"]
    p_boot = bootstrap_p_values(reps.combine(torch.cat([eye, -eye], dim=1)))
    for p in (p_perm, p_boot):
        assert 0.03 <= float((p <= 0.05).double().mean()) <= 0.07


def test_bootstrap_p_values_by_hand() -> None:
    """Replicates shifted to the null (boot − 0.1) against the estimate 0.1, counted as scipy
    counts: greater = (#≥ 0.1 + 1)/(5 + 1), less = (#≤ 0.1 + 1)/(5 + 1)."""
    diff = Replicates(
        torch.tensor([0.1], dtype=torch.float64),
        torch.tensor([[0.0, 0.1, 0.15, 0.2, 0.3]], dtype=torch.float64),
        torch.zeros(1, 2, dtype=torch.float64),
    )
    # null = [-0.1, 0, 0.05, 0.1, 0.2]: ≥ 0.1 twice (greater 3/6), ≤ 0.1 four times (less 5/6)
    assert float(bootstrap_p_values(diff, "greater")[0]) == pytest.approx(3 / 6)
    assert float(bootstrap_p_values(diff, "less")[0]) == pytest.approx(5 / 6)
    assert float(bootstrap_p_values(diff)[0]) == pytest.approx(1.0)  # 2 · min, capped


def test_p_values_exact_and_nan() -> None:
    null = torch.tensor([[0.0, 1.0, 2.0, 3.0], [0.0, 1.0, torch.nan, 3.0]], dtype=torch.float64)
    observed = torch.tensor([3.0, 1.0], dtype=torch.float64)
    p = p_values(null, observed, "greater", exact=True)
    assert float(p[0]) == 0.25 and p[1].isnan()


def test_holm_by_hand() -> None:
    """m = 4 finite p-values: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 →
    0.02, 0.03, 0.06, 0.04 → running maximum 0.02, 0.03, 0.06, 0.06."""
    got = holm_bonferroni([0.01, 0.04, 0.03, 0.005, float("nan")])
    assert np.allclose(got[:4], [0.03, 0.06, 0.06, 0.02]) and np.isnan(got[4])
    assert np.allclose(holm_bonferroni([0.5, 0.2, 0.9]), [1.0, 0.6, 1.0])  # capped at 1
    assert holm_bonferroni([]).shape == (0,)
