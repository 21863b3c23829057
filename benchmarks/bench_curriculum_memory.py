"""`lingprobe run curriculum` under a memory budget against the same run in memory, each in a
fresh process: peak resident memory, wall time (overhead: budgeted / in memory) and the largest
difference between their tables.

The lexical phenomenon of the full data (9,360 pairs), MiniLM at every layer (7 sites of
`[p ; h]`, 768 floats: 201 MB of float32 features, which the in-memory run also copies into the
probe input), 1 seed, 5 epochs, sizes 10/100/1000, 2 PVI folds. One untimed run fills the store
first, so both timed runs read the same extracted features from it and time the analyses: the
budgeted run (`--memory 64MiB`: the pair input one site a group, the next read while one
trains) and the in-memory run. Needs `LINGPROBE_DATA`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from benchmarks.bench_probes_common import load
from benchmarks.figures import Figures

RUN = ["run", "curriculum", "--phenomena", "lexical", "--layers", "all", "--seeds", "1"]
RUN += ["--epochs", "5", "--sizes", "10,100,1000", "--pvi-folds", "2", "--quiet"]
BUDGET = "64MiB"
TABLES = ("inoculation", "pvi", "cross_distribution")


def run_child(out: Path, store: Path, memory: str | None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one run in a fresh process."""
    flags = ["--out", str(out), "--store", str(store)]
    flags += ["--memory", memory] if memory is not None else []
    command = [sys.executable, "-m", "suites.cli", *RUN, *flags]
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    assert status == 0, f"the run failed; run `{' '.join(command)}` to see why"
    return time.perf_counter() - started, usage.ru_maxrss / 1024  # ru_maxrss is in KiB


def table(out: Path, name: str) -> pl.DataFrame:
    (unit,) = (out / "units").iterdir()
    return pl.read_parquet(unit / "lexical" / f"{name}.parquet")


@pytest.mark.full
@pytest.mark.needs_data
def test_bench_curriculum_under_a_memory_budget(figures: Figures, tmp_path: Path) -> None:
    if not os.environ.get("LINGPROBE_DATA"):
        pytest.skip("curriculum benchmark: set LINGPROBE_DATA to the data folder")
    store = tmp_path / "store"
    print(f"\n[curriculum memory] lexical, MiniLM every layer, fresh processes; {load()}")
    run_child(tmp_path / "fill", store, None)  # extraction into the store, untimed
    measured = {}
    for name, memory in (("budget", BUDGET), ("in memory", None)):
        wall, peak = measured[name] = run_child(tmp_path / name, store, memory)
        print(f"  {name} ({memory or 'no budget'}): peak RSS {peak:.0f} MiB, wall {wall:.1f} s")
    largest = 0.0
    for name in TABLES:
        ours, theirs = table(tmp_path / "budget", name), table(tmp_path / "in memory", name)
        assert ours.drop(pl.selectors.float()).equals(theirs.drop(pl.selectors.float()))
        for column in ours.select(pl.selectors.float()).columns:
            largest = max(largest, float((ours[column] - theirs[column]).abs().max() or 0))
    (wall, peak), (wall_memory, peak_memory) = measured["budget"], measured["in memory"]
    print(
        f"  budget / in memory: time {wall / wall_memory:.2f}x, peak RSS {peak - peak_memory:+.0f}"
        f" MiB; tables' largest |difference| {largest:.2g}"
    )
    figures.record(
        ratio=wall / wall_memory,
        against="the same run holding its features in memory (overhead)",
        times={"budget": wall, "in memory": wall_memory},
        peak_rss_mib=peak,
        peak_rss_in_memory_mib=peak_memory,
        largest_table_difference=largest,
    )
