"""Curriculum inoculation as one probe grid per phenomenon and input (explicit train masks) vs
the loop it replaced (one `fit_probes` call per N-per-label subsample and seed).

All 8 curriculum NLI phenomena, the suite's defaults (5 sizes: 10..1000 per label, 3 seeds, pair
and hypothesis-only inputs, 20 epochs, batch 8), on MiniLM's last layer ([p ; h] pooled
features, cached in the benchmark store). Needs `LINGPROBE_DATA` (the folder holding
`curriculum_nli/`). Prints both wall times, the ratio, and asserts equal results (the same
metrics and best epochs for every probe).
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest

from benchmarks.bench_probes_common import load, timed
from benchmarks.ewt_upos import MINILM, store_dir
from benchmarks.figures import Figures
from suites.curriculum import CurriculumConfig, inoculation, nli_features, read_all
from tests.suites.curriculum.loop_reference import inoculation_loop

INPUTS = ("pair", "hypothesis")


def curriculum_root() -> Path:
    root = os.environ.get("LINGPROBE_DATA")
    if not root or not (Path(root) / "curriculum_nli").is_dir():
        pytest.skip("curriculum benchmark: set LINGPROBE_DATA to the folder with curriculum_nli/")
    return Path(root) / "curriculum_nli"


@pytest.mark.full
@pytest.mark.needs_data
def test_bench_inoculation_one_grid_vs_loop(figures: Figures) -> None:
    from internals import load_subject
    from internals import sites as site_rules

    tasks = read_all(curriculum_root())
    subject = load_subject(MINILM)
    sites = site_rules.last(subject)
    feats = {
        name: nli_features(subject, task, sites, store=store_dir(), progress=False)
        for name, task in tasks.items()
    }
    config = CurriculumConfig()
    print(
        f"\n[curriculum/inoculation] {len(tasks)} phenomena, sizes {config.sizes}, seeds"
        f" {config.seeds}, inputs {INPUTS}, MiniLM last layer; {load()}"
    )

    def grids() -> dict[str, pl.DataFrame]:
        return {
            name: inoculation(task, feats[name], config, inputs=INPUTS, progress=False)
            for name, task in tasks.items()
        }

    ours = timed(grids)
    loop = timed(
        lambda: {
            name: inoculation_loop(task, feats[name], config, INPUTS)
            for name, task in tasks.items()
        }
    )
    assert isinstance(ours.result, dict) and isinstance(loop.result, dict)
    keys = ["input", "n_per_label", "seed", "site", "split", "metric"]
    worst, epochs_differ, rows = 0.0, 0, 0
    for name in tasks:
        joined = ours.result[name].join(loop.result[name], on=keys, suffix="_loop")
        assert joined.height == ours.result[name].height == loop.result[name].height
        worst = max(worst, float((joined["value"] - joined["value_loop"]).abs().max() or 0.0))
        epochs_differ += int((joined["best_epoch"] != joined["best_epoch_loop"]).sum())
        rows += joined.height
    print(
        f"  one grid per phenomenon and input: {ours.wall:.1f} s wall ({ours.cpu:.1f} s CPU);"
        f" loop of {len(tasks) * len(config.sizes) * len(config.seeds) * len(INPUTS)}"
        f" fit_probes calls: {loop.wall:.1f} s wall ({loop.cpu:.1f} s CPU) ->"
        f" {loop.wall / ours.wall:.1f}x wall, {loop.cpu / ours.cpu:.1f}x CPU\n"
        f"  equal results: {rows} metric rows, largest |difference| {worst:.1e},"
        f" best epochs differing {epochs_differ}; {load()}"
    )
    assert worst < 1e-6 and epochs_differ == 0
    figures.record(
        ratio=loop.wall / ours.wall,
        against="one fit_probes call per subsample size and seed (the loop)",
        at_least=1.0,
        times={"lingprobe": ours.wall, "loop": loop.wall},
        cpu_ratio=loop.cpu / ours.cpu,
    )
