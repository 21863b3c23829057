"""Big widths: the trainers at the hidden sizes of 7B-70B models, in memory and from a FeatureSet.

80 sites of 4,096 and of 8,192 dims (a 70B model has 80 layers of 8,192), `LINGPROBE_BW_ITEMS`
items (default 1,000, so that it runs in minutes), a planted 4-class signal. `fit_probes`: one
seed's task and control probes at every site (160 probes), 3 epochs. `fit_logistic_regression`:
the same 160 probes, `LINGPROBE_BW_MAX_ITER` L-BFGS iterations (default 30) without the Gram
preconditioner (a [8193, 8193] matrix per site would cost more than the fit). Each is timed in
memory (a float32 tensor) and from a float16 FeatureSet read under `memory=`
`LINGPROBE_BW_MEMORY` (default 1GiB: several groups of sites, the next read while one trains;
the FeatureSet is in the page cache, as after it is written). Printed per fit: the time per
probe, the GEMM work's rate as a fraction of this machine's matmul peak (2048^3 float32 GEMMs,
best of 5, measured in the same run), and the FeatureSet's time against the in-memory fit's;
the headline ratio is the largest of these (FeatureSet time / in-memory time), with no goal set.
Timings here are on a shared 2-core machine: other jobs may slow any step.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from benchmarks.bench_probes_common import load, measure_bounds
from benchmarks.feature_set_common import (
    CLASSES,
    grid_flops,
    logistic_flops,
    planted,
    write_planted,
)
from benchmarks.figures import Figures
from lingprobe.feature_set import FeatureSet
from probes import ProbeGrid, TrainConfig, fit_logistic_regression, fit_probes, random_splits

ITEMS = int(os.environ.get("LINGPROBE_BW_ITEMS", 1000))
SITES = 80
DIMS = (4096, 8192)
MEMORY = os.environ.get("LINGPROBE_BW_MEMORY", "1GiB")
MAX_ITER = int(os.environ.get("LINGPROBE_BW_MAX_ITER", 30))
EPOCHS = 3
PROBES = 2 * SITES  # task and control at every site


def seconds(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def grid_fit(features, labels, keys, memory: str | None):
    config = TrainConfig(epochs=EPOCHS, memory=memory)
    grid = ProbeGrid(seeds=(0,), control=True)
    splits = random_splits(ITEMS)
    return fit_probes(features, labels, splits, grid, config, keys=keys, progress=False)


def logistic_fit(features, y, memory: str | None):
    with warnings.catch_warnings():  # a few thousand items in 8,192 dims: not converged at 30
        warnings.simplefilter("ignore")
        return fit_logistic_regression(
            features, y, memory=memory, precondition=False, max_iter=MAX_ITER
        )


@pytest.mark.full
def test_big_widths(figures: Figures, tmp_path: Path) -> None:
    peak = measure_bounds().gflops32
    rows = []
    for dim in DIMS:
        data = planted(ITEMS, SITES, dim)
        features = write_planted(tmp_path / f"dim{dim}", data)
        x = FeatureSet.open(features.folder).to_tensor()  # the in-memory alternative
        shuffled = data.labels[torch.randperm(ITEMS, generator=torch.Generator().manual_seed(7))]
        y = torch.stack([data.labels, shuffled] * SITES)
        t_grid, grid = seconds(lambda x=x, d=data: grid_fit(x, d.labels, d.keys, None))
        t_grid_fs, grid_fs = seconds(
            lambda f=features, d=data: grid_fit(f, d.labels, d.keys, MEMORY)
        )
        assert torch.equal(grid.weights["coef"], grid_fs.weights["coef"])  # type: ignore[attr-defined]
        work = grid_flops(ITEMS, dim, PROBES, EPOCHS, CLASSES)
        rows.append(("fit_probes", dim, t_grid, t_grid_fs, work))
        site_major = x.transpose(0, 1).contiguous()
        del x
        t_log, fitted = seconds(lambda s=site_major, y=y: logistic_fit(s, y, None))
        del site_major
        t_log_fs, fitted_fs = seconds(lambda f=features, y=y: logistic_fit(f, y, MEMORY))
        assert torch.equal(fitted.coef_, fitted_fs.coef_)  # type: ignore[attr-defined]
        evaluations = float(fitted.n_fev_.double().sum())  # type: ignore[attr-defined]
        work = logistic_flops(ITEMS, dim, evaluations, CLASSES)
        rows.append(("fit_logistic_regression", dim, t_log, t_log_fs, work))
    print(
        f"\n[big widths] {ITEMS} items x {SITES} sites, {PROBES} probes per fit, FeatureSet"
        f" memory={MEMORY}; matmul peak {peak:.0f} GFLOP/s float32"
        f" ({torch.get_num_threads()} threads); {load()} (a shared machine)"
    )
    for name, dim, t_mem, t_fs, work in rows:
        print(
            f"  {name:24s} dim {dim}: in memory {1e3 * t_mem / PROBES:7.1f} ms/probe"
            f" ({work / t_mem / 1e9 / peak:5.1%} of peak); FeatureSet"
            f" {1e3 * t_fs / PROBES:7.1f} ms/probe ({work / t_fs / 1e9 / peak:5.1%} of peak),"
            f" {t_fs / t_mem:.2f}x the in-memory fit"
        )
    figures.record(
        ratio=max(t_fs / t_mem for _, _, t_mem, t_fs, _ in rows),
        against="the same fit on an in-memory float32 tensor (FeatureSet time / in-memory"
        " time, the worst fit and width)",
        times={
            f"{name}_{dim}_{kind}": t
            for name, dim, t_mem, t_fs, _ in rows
            for kind, t in (("memory", t_mem), ("feature_set", t_fs))
        },
        ratios={f"{name}_{dim}": t_fs / t_mem for name, dim, t_mem, t_fs, _ in rows},
        fraction_of_matmul_peak={
            f"{name}_{dim}_{kind}": work / t / 1e9 / peak
            for name, dim, t_mem, t_fs, work in rows
            for kind, t in (("memory", t_mem), ("feature_set", t_fs))
        },
        ms_per_probe={
            f"{name}_{dim}_{kind}": 1e3 * t / PROBES
            for name, dim, t_mem, t_fs, _ in rows
            for kind, t in (("memory", t_mem), ("feature_set", t_fs))
        },
        matmul_peak_gflops=peak,
        items=ITEMS,
        sites=SITES,
        memory=MEMORY,
    )
