"""Structural probes: the batched grid (7 sites x 3 seeds) vs one probe at a time.

Real UD English EWT trees (dev: 400 sentences to train on, 100 for the regimen's dev loss),
features of MiniLM's size (7 sites, dim 384, full-rank probes as the naacl19 BERT configs),
the reference regimen (Adam 1e-3, batches of 20 sentences) for 3 epochs with early stopping out
of reach, so both sides do the same steps. The loop trains each of the 21 probes alone with
`fit_structural_probes` (what one runs with the reference code: one probe per layer and seed);
its probes are checked equal to the grid's. Distance probes, then depth probes.
"""

from __future__ import annotations

import pytest
import torch

from benchmarks.bench_probes_common import load, timed
from benchmarks.ewt_sample import ewt_path
from benchmarks.figures import Figures
from probes.structural import (
    StructuralConfig,
    StructuralGrid,
    StructuralResults,
    fit_structural_probes,
)
from suites.structural.data import read_treebank

SITES, SEEDS, DIM = 7, (0, 1, 2), 384
CONFIG = StructuralConfig(epochs=3, stop_patience=10)


@pytest.fixture(scope="module")
def data():
    bank = read_treebank(ewt_path("dev", 500), limit_sentences=500)
    gen = torch.Generator().manual_seed(0)
    depth = bank.trees.depths().float()
    feats = torch.randn(len(bank.items), SITES, DIM, generator=gen)
    feats[:, :, :8] += depth[:, None, None].sqrt()  # some tree signal to fit
    codes = torch.zeros(len(bank), dtype=torch.long)
    codes[400:] = 1
    return bank.trees, feats, codes


def grid_run(data, kind: str) -> StructuralResults:
    trees, feats, codes = data
    grid = StructuralGrid(seeds=SEEDS)
    return fit_structural_probes(feats, trees, codes, kind, grid, CONFIG, progress=False)  # type: ignore[arg-type]


def loop_run(data, kind: str) -> list[StructuralResults]:
    trees, feats, codes = data
    return [
        fit_structural_probes(
            feats,
            trees,
            codes,
            kind,  # type: ignore[arg-type]
            StructuralGrid(seeds=(seed,), sites=(site,)),
            CONFIG,
            progress=False,
        )
        for seed in SEEDS
        for site in range(SITES)
    ]


@pytest.mark.quick
@pytest.mark.parametrize("kind", ["distance", "depth"])
def test_bench_structural_grid_vs_one_probe_at_a_time(figures: Figures, data, kind: str) -> None:
    trees, _, codes = data
    words = int(trees.lengths[codes == 0].sum())
    print(
        f"\n[structural/{kind}] {SITES} sites x {len(SEEDS)} seeds, {words} train words; {load()}"
    )
    loop = timed(lambda: loop_run(data, kind))
    main = timed(lambda: grid_run(data, kind))
    together = main.result
    alone = loop.result
    assert isinstance(together, StructuralResults) and isinstance(alone, list)
    # Equal up to float32 summation order, which Adam's g / sqrt(v) amplifies on coordinates
    # whose gradient is near zero: weights within 5e-4 (1% of the init scale 1/sqrt(dim)), and
    # every probe's metrics within 1e-4 at the same best epoch.
    for i, one in enumerate(alone):  # loop order (seed, site) is the grid's probe order
        torch.testing.assert_close(together.weights[i], one.weights[0], atol=5e-4, rtol=1e-3)
        ours = (
            together.table().filter(site=i % SITES, seed=SEEDS[i // SITES]).sort("split", "metric")
        )
        theirs = one.table().sort("split", "metric")
        assert ours["best_epoch"].to_list() == theirs["best_epoch"].to_list()
        torch.testing.assert_close(
            ours["value"].to_torch(), theirs["value"].to_torch(), atol=1e-4, rtol=0
        )
    print(
        f"  one probe at a time, 21 runs: {loop.wall:.1f} s wall ({loop.cpu:.1f} s CPU)\n"
        f"  grid, one optimisation:      {main.wall:.1f} s wall ({main.cpu:.1f} s CPU)\n"
        f"  ratio (loop / grid): {loop.wall / main.wall:.2f}x wall,"
        f" {loop.cpu / main.cpu:.2f}x CPU; {load()}"
    )
    figures.record(
        ratio=loop.wall / main.wall,
        against=f"one {kind} probe at a time (21 runs of fit_structural_probes)",
        at_least=1.0,
        times={"lingprobe": main.wall, "loop": loop.wall},
        cpu_ratio=loop.cpu / main.cpu,
    )
