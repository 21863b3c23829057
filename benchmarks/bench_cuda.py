"""The probe trainers on a CUDA device: the same numbers as the CPU, and how fast.

Run where a GPU is (`nox -s bench -- benchmarks/bench_cuda.py`); skipped without CUDA. Checks,
on synthetic UPOS-shaped features (13 sites, dim 384, 17 classes):
- the grid trainer's TorchScript chunk (fused AdamW on the device) against the Python loop on
  the same device, and both against the CPU;
- `fit_logistic_regression` on the device against the CPU;
- the paired bootstrap on the device against the CPU (the float GEMM there, int8 on the CPU);
and times the 130-probe sweep on the device against the CPU in the same run.
"""

from __future__ import annotations

import time

import pytest
import torch

import probes._grid.fused_steps
from benchmarks.bench_probes_common import N_ITEMS, load, upos_like
from benchmarks.figures import Figures
from probes import ProbeGrid, TrainConfig, fit_logistic_regression, fit_probes, random_splits
from probes.stats import ItemResamples, bootstrap_probes

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.full,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


def sweep(data, device: str, epochs: int = 5, fused: bool = True, dropout: float = 0.2):
    grid = ProbeGrid(seeds=range(5), control=True)
    config = TrainConfig(epochs=epochs, dropout=dropout)
    with pytest.MonkeyPatch.context() as patch:
        if not fused:
            patch.setattr(probes._grid.fused_steps, "linear_chunk", lambda: None)
        start = time.perf_counter()
        out = fit_probes(
            data.feats, data.labels, random_splits(N_ITEMS), grid, config,
            keys=data.keys, device=device, progress=False,
        )  # fmt: skip
        if device == "cuda":
            torch.cuda.synchronize()
    return out, time.perf_counter() - start


def test_bench_cuda_trainers_equal_cpu(figures: Figures) -> None:
    data = upos_like()
    name = torch.cuda.get_device_name()
    print(f"\n[cuda] {name}; torch {torch.__version__}; {load()}")
    sweep(data, "cuda", epochs=1)  # warm-up: CUDA context, kernels, TorchScript profiling
    sweep(data, "cuda", epochs=1, fused=False)
    gpu, t_gpu = sweep(data, "cuda")
    loop, t_loop = sweep(data, "cuda", fused=False)
    _, t_cpu = sweep(data, "cpu")
    same_device = all(torch.equal(gpu.weights[n], loop.weights[n]) for n in gpu.weights)
    print(
        f"  grid, 130 probes x 5 epochs: cuda {t_gpu:.2f} s (TorchScript chunk), {t_loop:.2f} s"
        f" (Python loop), cpu {t_cpu:.2f} s ({torch.get_num_threads()} threads) -> cuda"
        f" {t_cpu / min(t_gpu, t_loop):.1f}x; chunk == loop on cuda: {same_device}"
    )
    gaps = {}
    for dropout in (0.0, 0.2):
        runs = [sweep(data, device, dropout=dropout)[0] for device in ("cuda", "cpu")]
        weight_gap = max(
            float((runs[0].weights[n] - runs[1].weights[n]).abs().max()) for n in gpu.weights
        )
        accuracy = [r.table().filter(split="test", metric="accuracy")["value"] for r in runs]
        gaps[dropout] = float((accuracy[0] - accuracy[1]).abs().max())
        same_epochs = runs[0].probes["best_epoch"].equals(runs[1].probes["best_epoch"])
        print(
            f"  dropout {dropout}: cuda vs cpu largest weight gap {weight_gap:.2e}, test accuracy"
            f" gap {gaps[dropout]:.4f}, best epochs equal {same_epochs}"
        )
    x = data.feats.transpose(0, 1).contiguous()
    ys = data.labels[None].expand(x.shape[0], -1).contiguous()
    start = time.perf_counter()
    lg = fit_logistic_regression(x, ys, device="cuda", max_iter=300)
    t_lg = time.perf_counter() - start
    start = time.perf_counter()
    lc = fit_logistic_regression(x, ys, max_iter=300)
    t_lc = time.perf_counter() - start
    agree = float((lg.predict(x) == lc.predict(x)).double().mean())
    print(
        f"  logistic, 13 probes: cuda {t_lg:.2f} s, cpu {t_lc:.2f} s; predictions agree"
        f" {agree:.4%};"
        f" objective gap {float((lg.objective_ - lc.objective_).abs().max()):.2e}"
    )
    test = gpu.test
    assert test is not None
    pred, truth = test.pred[:8].long(), test.targets[test.target_row[:8]].long()
    resamples = ItemResamples(int(pred.shape[1]), 500, 0)
    bg = bootstrap_probes(pred, truth, resamples, head="classification", outputs=17, device="cuda")
    bc = bootstrap_probes(pred, truth, resamples, head="classification", outputs=17)
    boot_gap = max(float((bg[m].boot - bc[m].boot).abs().max()) for m in bg)
    print(
        f"  bootstrap, 8 probes x 500 resamples: largest replicate gap cuda vs cpu {boot_gap:.2e}"
    )
    assert same_device and gaps[0.0] < 0.01 and agree > 0.99 and boot_gap < 1e-9
    figures.record(
        ratio=t_cpu / min(t_gpu, t_loop),
        against="the same grid on the host's CPU threads",
        at_least=1.0,
        times={"cuda_chunk": t_gpu, "cuda_loop": t_loop, "cpu": t_cpu, "logistic_cuda": t_lg},
        logistic_cpu_s=t_lc,
        accuracy_gap_no_dropout=gaps[0.0],
    )
