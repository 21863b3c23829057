"""Paired bootstrap of a demo-sized probe grid: one batched pass vs training vs a scipy loop.

The demo's grid (`lingprobe demo`: MiniLM, 7 sites x 3 seeds x {task, control} = 42 probes,
UPOS with 17 classes; its subsample has ~51k train tokens, 10% carved as dev, and ~11k test
tokens) is trained here once on synthetic features of that shape (dim 384, 46k train, 5k dev,
12k test items, Holmes/edge defaults: 20 epochs, batch 64, dropout 0.1). Then:

(a) 1,000 BCa resamples of accuracy and macro-F1 for all 42 probes (`bootstrap_probes` +
    `confidence_interval`), against the training time of the grid (goal <= 10 %);
(b) the same against a per-probe loop calling `scipy.stats.bootstrap(paired=True,
    vectorized=True)` with numpy statistics (accuracy, macro-F1 from per-class counts), BCa
    and percentile, timed on a few probes and extrapolated to 42 (goal >= 20x). On one probe
    fed scipy's own resample indices, our interval equals scipy's (1e-12), so both compute
    the same thing.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

from benchmarks.bench_probes_common import Timed, load, timed
from benchmarks.figures import Figures
from probes import ProbeGrid, ProbeResults, TrainConfig, fit_probes
from probes.stats import ItemResamples, bootstrap_probes, confidence_interval

N_TRAIN, N_DEV, N_TEST, SITES, DIM, CLASSES = 46_000, 5_000, 12_000, 7, 384, 17
SEEDS, N_RESAMPLES, METRICS = (0, 1, 2), 1000, ("accuracy", "macro_f1")
SCIPY_PROBES = 2  # probes timed with scipy (then extrapolated to the grid)


def demo_like(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Features `[item, site, dim]` with a layer curve of class signal, Zipfian labels, and
    split codes (train, dev, test)."""
    gen = torch.Generator().manual_seed(seed)
    n = N_TRAIN + N_DEV + N_TEST
    class_p = 1 / torch.arange(1, CLASSES + 1, dtype=torch.float64) ** 0.8
    labels = torch.multinomial(class_p, n, replacement=True, generator=gen)
    direction = torch.randn(CLASSES, DIM, generator=gen) / math.sqrt(DIM)
    feats = torch.randn(n, SITES, DIM, generator=gen)
    for site in range(SITES):
        feats[:, site] += (0.5 + 1.5 * math.sin(math.pi * site / (SITES - 1))) * direction[labels]
    codes = torch.cat([torch.zeros(N_TRAIN), torch.ones(N_DEV), torch.full((N_TEST,), 2)]).long()
    return feats, labels, codes


def np_accuracy(t: np.ndarray, p: np.ndarray, axis: int = -1) -> np.ndarray:
    return (t == p).mean(axis)


def np_macro_f1(t: np.ndarray, p: np.ndarray, axis: int = -1) -> np.ndarray:
    """Macro-F1 over the classes present in truth or prediction, along the last axis."""
    total = np.zeros(np.broadcast_shapes(t.shape, p.shape)[:-1])
    present = np.zeros_like(total)
    for c in range(CLASSES):
        tc, pc = t == c, p == c
        tp, denom = (tc & pc).sum(-1), tc.sum(-1) + pc.sum(-1)
        total += np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0)
        present += denom > 0
    return total / present


def ours(res: ProbeResults) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    test = res.test
    assert test is not None
    reps = bootstrap_probes(
        test.pred,
        test.truth(),
        ItemResamples(test.n_items, N_RESAMPLES, 0),
        head="classification",
        outputs=CLASSES,
        metrics=METRICS,
    )
    return {m: confidence_interval(reps[m], 0.95, "bca") for m in METRICS}


def scipy_loop(pred: np.ndarray, truth: np.ndarray, method: str, rng_seed: int = 0) -> list:
    """What a user writes: scipy.stats.bootstrap per probe and metric."""
    out = []
    for p in range(pred.shape[0]):
        for fn in (np_accuracy, np_macro_f1):
            res = stats.bootstrap(
                (truth[p], pred[p]),
                fn,
                paired=True,
                vectorized=True,
                n_resamples=N_RESAMPLES,
                method=method,
                batch=50,  # bounds scipy's memory: [50, 12k] resamples and jackknife rows
                rng=np.random.default_rng(rng_seed),
            )
            out.append(res.confidence_interval)
    return out


@pytest.fixture(scope="module")
def trained() -> tuple[ProbeResults, Timed]:
    feats, labels, codes = demo_like()
    config = TrainConfig(dropout=0.1)  # edge-probing paper §2.1; Holmes epochs/batch/lr
    run = timed(
        lambda: fit_probes(
            feats, labels, codes, ProbeGrid(seeds=SEEDS, control=True), config, progress=False
        )
    )
    assert isinstance(run.result, ProbeResults) and run.result.probes.height == 42
    return run.result, run


@pytest.mark.quick
def test_bench_bootstrap_vs_training_and_scipy(figures: Figures, trained) -> None:
    res, train = trained
    print(f"\n[probes/bootstrap] {torch.get_num_threads()} threads; {load()}")
    runs = [timed(lambda: ours(res)) for _ in range(3)]
    best = min(r.wall for r in runs)
    best_cpu = min(r.cpu for r in runs)
    test = res.test
    assert test is not None
    print(
        f"  grid: 42 probes, {test.n_items} test items, {CLASSES} classes; training (20 epochs,"
        f" {N_TRAIN} train items) {train.wall:.1f} s wall, {train.cpu:.1f} s CPU"
    )
    print(
        f"  (a) {N_RESAMPLES} BCa resamples of accuracy + macro-F1 for all probes:"
        f" {best:.2f} s wall, {best_cpu:.2f} s CPU (best of 3) = {100 * best / train.wall:.1f}%"
        f" of training wall, {100 * best_cpu / train.cpu:.1f}% of its CPU (goal <= 10%)"
    )
    pred, truth = test.pred.long().numpy(), test.truth().long().numpy()
    speedups = {}
    for method in ("BCa", "percentile"):
        loop = timed(lambda m=method: scipy_loop(pred[:SCIPY_PROBES], truth[:SCIPY_PROBES], m))
        scale = pred.shape[0] / SCIPY_PROBES
        mine = runs[-1] if method == "BCa" else timed(lambda: _percentile(res))
        print(
            f"  (b) scipy.stats.bootstrap per probe, {method}: {loop.wall / SCIPY_PROBES:.1f} s"
            f" per probe (2 metrics), extrapolated x{scale:.0f}: {loop.wall * scale:.0f} s wall,"
            f" {loop.cpu * scale:.0f} s CPU -> {loop.wall * scale / mine.wall:.0f}x ours wall"
            f" ({mine.wall:.2f} s), {loop.cpu * scale / mine.cpu:.0f}x CPU (goal >= 20x)"
        )
        speedups[method] = (loop.wall * scale / mine.wall, loop.wall * scale)
    # the same numbers: one probe on scipy's own resample indices
    idx = np.random.default_rng(0).integers(0, test.n_items, (N_RESAMPLES, test.n_items))
    reps = bootstrap_probes(
        test.pred[:1],
        test.truth()[:1],
        ItemResamples.from_indices(torch.from_numpy(idx)),
        head="classification",
        outputs=CLASSES,
        metrics=["macro_f1"],
    )["macro_f1"]
    low, high = confidence_interval(reps, 0.95, "bca")
    want = scipy_loop(pred[:1], truth[:1], "BCa")[1]
    assert (float(low[0]), float(high[0])) == pytest.approx((want.low, want.high), abs=1e-12)
    print(f"  on scipy's indices our BCa interval equals scipy's (1e-12); {load()}")
    figures.record(
        ratio=speedups["BCa"][0],
        against="scipy.stats.bootstrap per probe (BCa, extrapolated to 42 probes)",
        at_least=20.0,
        times={"lingprobe": best, "scipy": speedups["BCa"][1], "training": train.wall},
        share_of_training=best / train.wall,
        share_of_training_goal_at_most=0.10,
        percentile_speedup=speedups["percentile"][0],
    )


def _percentile(res: ProbeResults) -> None:
    test = res.test
    assert test is not None
    reps = bootstrap_probes(
        test.pred,
        test.truth(),
        ItemResamples(test.n_items, N_RESAMPLES, 0),
        head="classification",
        outputs=CLASSES,
        metrics=METRICS,
    )
    for m in METRICS:
        confidence_interval(reps[m], 0.95, "percentile")
