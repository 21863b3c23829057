"""Scaling curves of both trainers, written to `scaling.csv`, `scaling.parquet` and `scaling.png`.

- the minibatch AdamW grid trainer: wall time and time per probe for 1, 10, 100 and 1,000 probes
  (sites x seeds x {task, control} of synthetic UPOS-like features, 5,000 items, 5 epochs);
- the batched L-BFGS logistic-regression fitter against the loop of scikit-learn fits for 2 to
  50 sites (task and control probe per site; 3,000 items, dim 128, 17 classes; after a warm-up,
  the fastest of 3 runs of each).

Output folder: `$LINGPROBE_BENCH_OUT` or `.benchmarks/scaling`. The growth between neighbouring
sizes is printed as the exponent b of time ~ size^b (1: linear, < 1: sublinear).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import matplotlib.pyplot as plt
import polars as pl
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from benchmarks.bench_probes_common import Timed, fastest, load, timed
from benchmarks.figures import Figures
from probes import ProbeGrid, TrainConfig, fit_logistic_regression, fit_probes, random_splits

GRIDS = {1: (1, 1, False), 10: (5, 1, True), 100: (10, 5, True), 1000: (25, 20, True)}
SITES = (2, 5, 10, 20, 50)
REPEATS = 3  # runs of each logistic-regression size; the fastest counts


def features(n_items: int, n_sites: int, dim: int, k: int, seed: int = 0):
    """Gaussian class means whose strength grows with the site."""
    gen = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, k, (n_items,), generator=gen)
    means = torch.randn(k, dim, generator=gen) / math.sqrt(dim)
    feats = torch.randn(n_items, n_sites, dim, generator=gen)
    strength = torch.linspace(0.5, 3.0, n_sites)[None, :, None]
    return feats + strength * means[labels][:, None, :], labels


def growth(sizes: list[int], times: list[float]) -> str:
    """Exponents of time ~ size^b between neighbouring sizes."""
    steps = [
        f"{a}->{b}: {math.log(tb / ta) / math.log(b / a):.2f}"
        for (a, ta), (b, tb) in zip(zip(sizes, times), zip(sizes[1:], times[1:]))
    ]
    return ", ".join(steps)


def out_dir() -> Path:
    folder = Path(os.environ.get("LINGPROBE_BENCH_OUT", ".benchmarks/scaling"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.mark.full
def test_bench_scaling_curves(figures: Figures) -> None:
    print(f"\n[probes/scaling] {torch.get_num_threads()} threads; {load()}")
    rows = []
    feats, labels = features(5000, 25, 384, 17)
    splits = random_splits(5000)
    config = TrainConfig(epochs=5)

    def grid_run(sites: int, seeds: int, control: bool) -> object:
        grid = ProbeGrid(seeds=range(seeds), sites=range(sites), control=control)
        return fit_probes(feats, labels, splits, grid, config, progress=False)

    grid_run(*GRIDS[1])  # warm-up
    for probes, shape in GRIDS.items():
        run = timed(lambda shape=shape: grid_run(*shape))
        rows.append(
            {"curve": "grid AdamW", "size": probes, "method": "lingprobe", "seconds": run.wall}
        )
    grid_times = [r["seconds"] for r in rows]
    sizes = list(GRIDS)
    print(
        "  grid trainer (5,000 items, 5 epochs): "
        + ", ".join(
            f"{p} probes {t:.1f} s ({1e3 * t / p:.0f} ms/probe)" for p, t in zip(sizes, grid_times)
        )
        + f"\n    growth exponents {growth(sizes, grid_times)}"
    )

    x_all, y = features(3000, max(SITES), 128, 17, seed=1)
    control = y[torch.randperm(y.numel(), generator=torch.Generator().manual_seed(2))]

    def both(sites: int) -> tuple[Timed, Timed]:
        """The batched fit and the scikit-learn loop on the first `sites` sites (fastest of
        `REPEATS` each: the small sizes take a tenth of a second)."""
        x = x_all[:, :sites].transpose(0, 1).contiguous()
        ys = torch.stack([y, control]).repeat(sites, 1)
        batched, _ = fastest(lambda: fit_logistic_regression(x, ys), REPEATS)
        loop, _ = fastest(
            lambda: [
                LogisticRegression().fit(x[p // 2].numpy(), ys[p].numpy())
                for p in range(ys.shape[0])
            ],
            REPEATS,
        )
        return batched, loop

    both(SITES[0])  # warm-up, not timed: lazy imports and thread pools of either side
    ours, theirs = [], []
    for sites in SITES:
        batched, loop = both(sites)
        ours.append(batched.wall)
        theirs.append(loop.wall)
        for method, t in (("lingprobe", batched.wall), ("sklearn loop", loop.wall)):
            rows.append({"curve": "logistic", "size": sites, "method": method, "seconds": t})
    print(
        "  logistic regression (task + control per site): "
        + ", ".join(
            f"{s} sites {a:.1f} s vs {b:.1f} s ({b / a:.1f}x)"
            for s, a, b in zip(SITES, ours, theirs)
        )
        + f"\n    growth exponents: batched {growth(list(SITES), ours)};"
        f" sklearn loop {growth(list(SITES), theirs)}; {load()}"
    )
    table = pl.DataFrame(rows)
    folder = out_dir()
    table.write_csv(folder / "scaling.csv")
    table.write_parquet(folder / "scaling.parquet")
    plt.switch_backend("Agg")
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.loglog(sizes, grid_times, "o-", label="total")
    left.loglog(sizes, [t / p for t, p in zip(grid_times, sizes)], "s--", label="per probe")
    left.set(xlabel="probes", ylabel="seconds", title="grid trainer (5 epochs)")
    left.legend()
    right.loglog(SITES, ours, "o-", label="lingprobe (batched)")
    right.loglog(SITES, theirs, "s--", label="sklearn loop")
    right.set(xlabel="sites", ylabel="seconds", title="logistic regression")
    right.legend()
    fig.tight_layout()
    fig.savefig(folder / "scaling.png", dpi=120)
    plt.close(fig)
    print(f"  wrote {folder}/scaling.csv, scaling.parquet, scaling.png")
    assert table.height == len(GRIDS) + 2 * len(SITES)
    figures.record(
        ratio=theirs[-1] / ours[-1],
        against=f"a loop of scikit-learn LogisticRegression ({SITES[-1]} sites, the largest size)",
        times={
            **{f"grid_{p}_probes": t for p, t in zip(sizes, grid_times)},
            **{f"logistic_{s}_sites": t for s, t in zip(SITES, ours)},
            **{f"sklearn_{s}_sites": t for s, t in zip(SITES, theirs)},
        },
        logistic_speedup_by_sites={str(s): b / a for s, a, b in zip(SITES, ours, theirs)},
        grid_ms_per_probe={str(p): 1e3 * t / p for p, t in zip(sizes, grid_times)},
    )
