"""Probes on a CUDA device trained from a `FeatureSet` against the same features already there.

Run where a GPU is (`nox -s bench -- benchmarks/bench_cuda_feature_set.py`); skipped without
CUDA. A FeatureSet of float16 features with a planted linear signal (default 20,000 items x 12
sites x 1,024, 0.5 GB on disk) is read under a memory budget of `LINGPROBE_CUDA_FS_GROUP` (2)
sites per group, so the fits read several groups, the next while one trains. Each group goes
from disk into pinned host memory and on to the device without blocking, on a side stream
(`probes._grid.host_buffers`). The page cache is warm (the files are read once before timing):
what is compared is the way to the device and its overlap with training, not the disk.

Timed, each on the device: the task-and-control grid of every site (`fit_probes`, Trainer A,
3 epochs) and `fit_logistic_regression` of every site, (1) from the same features as one tensor
already on the device (float16 for the grid, as the FeatureSet holds them; float32 for L-BFGS),
(2) from the FeatureSet with pinned streaming, and (3) from the FeatureSet with pageable host
groups moved by the trainer (pinning turned off). The ratio is (2) / (1) for each fit, an
overhead; the results of (1) and (2) must agree (test accuracy within 0.01, logistic
predictions on 99 % of the items).

Sizes (environment): `LINGPROBE_CUDA_FS_ITEMS`, `_SITES`, `_DIM` (20000, 12, 1024), `_GROUP`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from benchmarks.feature_set_common import planted, write_planted
from benchmarks.figures import Figures
from probes import ProbeGrid, TrainConfig, fit_logistic_regression, fit_probes, random_splits
from probes._grid import host_buffers

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.full,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

ITEMS = int(os.environ.get("LINGPROBE_CUDA_FS_ITEMS", 20_000))
SITES = int(os.environ.get("LINGPROBE_CUDA_FS_SITES", 12))
DIM = int(os.environ.get("LINGPROBE_CUDA_FS_DIM", 1024))
GROUP = int(os.environ.get("LINGPROBE_CUDA_FS_GROUP", 2))
EPOCHS = 3


def timed(run: Callable[[], Any]) -> tuple[Any, float]:
    torch.cuda.synchronize()
    start = time.perf_counter()
    out = run()
    torch.cuda.synchronize()
    return out, time.perf_counter() - start


def test_bench_cuda_feature_set_against_features_on_the_device(
    figures: Figures, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = planted(ITEMS, SITES, DIM)
    features = write_planted(tmp_path / "fs", data)
    features.read()  # the page cache warm: the disk is not what is compared
    x16 = data.sites_in_memory(list(range(SITES))).half()
    on_device16 = x16.to("cuda")
    on_device32 = x16.float().transpose(0, 1).contiguous().to("cuda")  # [site, item, dim]
    del x16
    splits = random_splits(ITEMS)
    grid = ProbeGrid(seeds=(0,), control=True)
    config = TrainConfig(epochs=EPOCHS)
    streamed = TrainConfig(epochs=EPOCHS, memory=2 * GROUP * ITEMS * DIM * 2)  # float16 held
    y = data.labels[None].expand(SITES, -1).contiguous()
    logistic_memory = 2 * GROUP * ITEMS * DIM * 4  # float32 held

    def grid_fit(feats: Any, cfg: TrainConfig) -> Any:
        options = {"keys": data.keys, "device": "cuda", "progress": False}
        return fit_probes(feats, data.labels, splits, grid, cfg, **options)

    def logistic_fit(X: Any, memory: int | None) -> Any:
        return fit_logistic_regression(X, y, device="cuda", memory=memory, max_iter=100)

    name = torch.cuda.get_device_name()
    print(f"\n[cuda feature set] {name}; torch {torch.__version__}; {ITEMS}x{SITES}x{DIM}")
    warm = 1000  # warm-up: CUDA context, kernels
    fit_probes(
        on_device16[:warm], data.labels[:warm], random_splits(warm), grid, TrainConfig(epochs=1),
        keys=data.keys[:warm], device="cuda", progress=False,
    )  # fmt: skip
    runs: dict[str, tuple[Any, float]] = {}
    runs["grid_tensor"] = timed(lambda: grid_fit(on_device16, config))
    runs["grid_pinned"] = timed(lambda: grid_fit(features, streamed))
    runs["logistic_tensor"] = timed(lambda: logistic_fit(on_device32, None))
    runs["logistic_pinned"] = timed(lambda: logistic_fit(features, logistic_memory))
    with monkeypatch.context() as patch:
        patch.setattr(host_buffers, "pins", lambda device: False)
        runs["grid_pageable"] = timed(lambda: grid_fit(features, streamed))
        runs["logistic_pageable"] = timed(lambda: logistic_fit(features, logistic_memory))
    times = {key: seconds for key, (_, seconds) in runs.items()}
    accuracy = [
        runs[key][0].table().filter(split="test", metric="accuracy")["value"]
        for key in ("grid_tensor", "grid_pinned")
    ]
    accuracy_gap = float((accuracy[0] - accuracy[1]).abs().max())
    items = on_device32[:, :2000].cpu()
    agree = float(
        (runs["logistic_tensor"][0].predict(items) == runs["logistic_pinned"][0].predict(items))
        .double()
        .mean()
    )
    grid_ratio = times["grid_pinned"] / times["grid_tensor"]
    logistic_ratio = times["logistic_pinned"] / times["logistic_tensor"]
    for fit, ratio in (("grid", grid_ratio), ("logistic", logistic_ratio)):
        print(
            f"  {fit}: on the device {times[f'{fit}_tensor']:.2f} s, FeatureSet pinned"
            f" {times[f'{fit}_pinned']:.2f} s ({ratio:.2f}x), pageable"
            f" {times[f'{fit}_pageable']:.2f} s"
            f" ({times[f'{fit}_pageable'] / times[f'{fit}_tensor']:.2f}x)"
        )
    print(f"  test accuracy gap {accuracy_gap:.4f}; logistic predictions agree {agree:.4%}")
    assert accuracy_gap < 0.01 and agree > 0.99
    figures.record(
        ratio=grid_ratio,
        against="the same features as one tensor already on the device",
        at_most=1.25,
        times=times,
        logistic_ratio=logistic_ratio,
        accuracy_gap=accuracy_gap,
        logistic_agreement=agree,
    )
