"""The minibatch AdamW grid trainer on a UPOS-sized sweep: one batched optimisation vs one
training run per probe.

130 probes (13 sites x 5 seeds x {task, control}), 20,000 items, dim 384, 17 classes, Holmes
defaults (20 epochs, batch 64). The per-probe loop (what Holmes does: one training run per
probe, probe after probe, each step eager PyTorch operations called from Python: `fit_probes`
on a one-probe grid with the TorchScript chunk of `fused_steps` switched off) is timed on
a few probes and extrapolated linearly to 130; its probes are checked equal to the batched ones.
Printed beside it: the same one-probe fits with the TorchScript chunk (lingprobe used one probe
at a time). Also: the shared-order option, the roofline
(feature GB/s and GFLOP/s against this machine's bounds, measured right before and right after
each sweep, the higher counting; the sweep's fastest of 3 runs, 2 for shared order, as the
bounds are the best of 5 each, since the shared machine's noise is 5-10 %; the loop, timed
once, is set against that fastest sweep), and the
same comparison on one thread in CPU seconds, which other jobs on the shared machine disturb
least (with two threads, contention stalls the loop's tiny OpenMP ops more than the sweep).
"""

from __future__ import annotations

import pytest
import torch

import probes._grid.fused_steps
from benchmarks.bench_probes_common import (
    DIM,
    N_CLASSES,
    N_ITEMS,
    N_SITES,
    MachineBounds,
    Timed,
    UposLike,
    fastest,
    load,
    measure_bounds,
    threads,
    timed,
    upos_like,
)
from benchmarks.figures import Figures
from probes import ProbeGrid, ProbeResults, TrainConfig, fit_probes, random_splits

SEEDS = range(5)
SWEEPS, SHARED_SWEEPS = 3, 2  # repeats of the 2-thread sweeps (the fastest counts)
LOOP_PROBES = [(0, 0, "task"), (6, 1, "control"), (12, 4, "task"), (3, 2, "control")]


@pytest.fixture(scope="module")
def data() -> UposLike:
    return upos_like()


def sweep(data: UposLike, config: TrainConfig) -> ProbeResults:
    grid = ProbeGrid(seeds=SEEDS, control=True)
    return fit_probes(
        data.feats,
        data.labels,
        random_splits(N_ITEMS),
        grid,
        config,
        keys=data.keys,
        progress=False,
    )


def one_probe(data: UposLike, site: int, seed: int, variant: str) -> ProbeResults:
    grid = ProbeGrid(
        seeds=[seed], sites=[site], task=variant == "task", control=variant == "control"
    )
    return fit_probes(
        data.feats,
        data.labels,
        random_splits(N_ITEMS),
        grid,
        TrainConfig(),
        keys=data.keys,
        progress=False,
    )


def roofline(wall: float, config: TrainConfig, bounds: MachineBounds, streams: int) -> str:
    """Work of the sweep: training GEMMs (forward + weight gradient) and evaluation GEMMs."""
    n_train, n_dev = round(0.7 * N_ITEMS), round(0.1 * N_ITEMS)
    rows = n_train * config.epochs  # rows each probe trains on
    cols = N_SITES * len(SEEDS) * 2 * N_CLASSES  # every probe's output columns
    flops = 4 * rows * DIM * cols  # forward and weight-gradient GEMMs
    flops += 2 * (config.epochs * n_dev + N_ITEMS) * DIM * cols
    row_bytes = N_SITES * DIM * 4
    read = (rows * streams + config.epochs * n_dev + N_ITEMS) * row_bytes
    gflops, gbs = flops / wall / 1e9, read / wall / 1e9
    intensity = flops / read
    bound = min(bounds.gflops32, bounds.read_gbs * intensity)
    kind = "compute" if bound == bounds.gflops32 else "memory"
    return (
        f"  roofline: {gflops:.1f} GFLOP/s and {gbs:.2f} GB/s of feature reads;"
        f" intensity {intensity:.0f} FLOP/byte -> {kind}-bound at {bound:.0f} GFLOP/s;"
        f" achieved {100 * gflops / bound:.0f}% of that bound"
        f" (feature reads: {100 * gbs / bounds.read_gbs:.1f}% of read bandwidth)"
    )


def loop_subset(data: UposLike, batched: ProbeResults, eager: bool = True) -> tuple[float, float]:
    """Wall and CPU seconds of the per-probe loop over `LOOP_PROBES` (`eager`: each step as
    eager operations from Python, as a user's own loop); each probe is checked equal to its
    twin in the batched sweep."""
    wall = cpu = 0.0
    for site, seed, variant in LOOP_PROBES:
        with pytest.MonkeyPatch.context() as patch:
            if eager:
                patch.setattr(probes._grid.fused_steps, "linear_chunk", lambda: None)
            alone = timed(lambda s=site, d=seed, v=variant: one_probe(data, s, d, v))
        wall, cpu = wall + alone.wall, cpu + alone.cpu
        assert isinstance(alone.result, ProbeResults)
        row = batched.probes.filter(site=site, seed=seed, variant=variant)
        p = int(row["probe"][0])
        for name, tensor in alone.result.weights.items():
            torch.testing.assert_close(tensor[0], batched.weights[name][p], atol=1e-5, rtol=1e-5)
        assert alone.result.probes["best_epoch"][0] == row["best_epoch"][0]
    return wall, cpu


def compare(label: str, batched: Timed, loop: tuple[float, float]) -> str:
    scale = 130 / len(LOOP_PROBES)
    wall, cpu = loop[0] * scale, loop[1] * scale
    return (
        f"  {label}: batched sweep of 130 probes {batched.wall:.1f} s wall ({batched.cpu:.1f} s"
        f" CPU); per-probe loop {loop[0] / len(LOOP_PROBES):.2f} s per probe, timed on"
        f" {len(LOOP_PROBES)} probes and extrapolated x{scale:.1f}: {wall:.0f} s wall"
        f" ({cpu:.0f} s CPU) -> {wall / batched.wall:.1f}x wall, {cpu / batched.cpu:.1f}x CPU"
        " (goal >= 10x); loop probes equal their batched twins (1e-5), same best epochs"
    )


@pytest.mark.full
def test_bench_probe_sweep_batched_vs_per_probe_loop(figures: Figures, data: UposLike) -> None:
    bounds = measure_bounds()
    print(f"\n[probes/grid AdamW] {bounds}; {load()}")
    batched, sweep_walls = fastest(lambda: sweep(data, TrainConfig()), SWEEPS)
    after = measure_bounds()  # the peak right after the sweeps too: the higher one counts
    print(f"  {SWEEPS} sweeps: {', '.join(f'{w:.1f}' for w in sweep_walls)} s (the fastest counts)")
    res = batched.result
    assert isinstance(res, ProbeResults) and res.probes.height == 130
    loop = loop_subset(data, res)
    print(compare(f"{torch.get_num_threads()} threads", batched, loop))
    fused = loop_subset(data, res, eager=False)
    print(
        f"  one-probe fits with the TorchScript chunk: {fused[0] / len(LOOP_PROBES):.2f} s per"
        f" probe -> the sweep is {fused[0] * 130 / len(LOOP_PROBES) / batched.wall:.1f}x wall"
    )
    print(f"  after the sweep: {after}")
    print(roofline(batched.wall, TrainConfig(), bounds.best(after), streams=len(SEEDS)))

    bounds = measure_bounds()
    shared, walls = fastest(lambda: sweep(data, TrainConfig(shared_order=True)), SHARED_SWEEPS)
    after = measure_bounds()
    print(
        f"  around the shared-order sweeps ({', '.join(f'{w:.1f}' for w in walls)} s): {bounds}"
        f" / {after}"
    )
    assert isinstance(shared.result, ProbeResults)
    f1 = {
        name: r.table().filter(split="test", metric="macro_f1", variant="task")["value"].mean()
        for name, r in (("per-seed", res), ("shared", shared.result))
    }
    print(
        f"  shared minibatch order across seeds: {shared.wall:.1f} s wall ({shared.cpu:.1f} s"
        f" CPU), {batched.wall / shared.wall:.2f}x the per-seed-order sweep; mean test"
        f" macro-F1 {f1['shared']:.4f} vs {f1['per-seed']:.4f} (a different protocol)"
    )
    print(roofline(shared.wall, TrainConfig(), bounds.best(after), streams=1))

    with threads(1):  # CPU seconds of one thread: least disturbed by other jobs on the machine
        one = timed(lambda: sweep(data, TrainConfig()))
        assert isinstance(one.result, ProbeResults)
        one_loop = loop_subset(data, one.result)
        print(compare("1 thread", one, one_loop) + f"; {load()}")
    scale = 130 / len(LOOP_PROBES)
    figures.record(
        ratio=loop[0] * scale / batched.wall,
        against="one training run per probe (eager PyTorch steps; timed on a few, extrapolated)",
        at_least=10.0,
        times={"lingprobe": batched.wall, "loop": loop[0] * scale, "shared_order": shared.wall},
        cpu_ratio=loop[1] * scale / batched.cpu,
        one_thread_cpu_ratio=one_loop[1] * scale / one.cpu,
        sweeps_s=sweep_walls,
    )
