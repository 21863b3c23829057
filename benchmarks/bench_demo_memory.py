"""`lingprobe demo` in a fresh process: peak resident memory and wall time (goals: <= 2 GB,
<= 3 min on a quiet machine), and what float16 features change.

Runs the real command (`lingprobe demo`, default subsample: 3000 train / 800 dev sentences,
MiniLM and its random twin, UPOS and deprel, every layer, 3 seeds, task + control) twice in
child processes: as shipped (float32 features), and with the features kept in float16 (the
store's half-precision option, passed to `run_edge` by this benchmark's driver). Prints each
run's peak RSS (the kernel's high-water mark of the child) and wall time, and the largest
difference in the demo's accuracies between the two. Needs `LINGPROBE_DATA`.
`python -m benchmarks.bench_demo_memory OUT [float16]` is the driver the benchmark starts.
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


def run_child(out: Path, dtype: str) -> tuple[float, float]:
    """Wall seconds and peak RSS (GiB) of one demo run in a fresh process."""
    command = [sys.executable, "-m", "benchmarks.bench_demo_memory", str(out), dtype]
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    assert status == 0, f"demo run failed ({dtype}); run `{' '.join(command)}` to see why"
    return time.perf_counter() - started, usage.ru_maxrss / 2**20  # ru_maxrss is in KiB


def scores(out: Path) -> pl.DataFrame:
    return pl.concat(pl.read_parquet(p) for p in sorted((out / "units").glob("*scores*")))


@pytest.mark.full
@pytest.mark.needs_data
def test_bench_demo_peak_memory(figures: Figures, tmp_path: Path) -> None:
    if not os.environ.get("LINGPROBE_DATA"):
        pytest.skip("demo benchmark: set LINGPROBE_DATA to the data folder (ud_english_ewt/)")
    print(f"\n[demo memory] `lingprobe demo` with its defaults, each in a fresh process; {load()}")
    runs, measured = {}, {}
    for dtype in ("float32", "float16"):
        out = tmp_path / dtype
        wall, peak = run_child(out, dtype)
        runs[dtype], measured[dtype] = scores(out), (wall, peak)
        print(
            f"  {dtype} features: peak RSS {peak:.2f} GiB (goal <= 2 GiB), wall {wall:.0f} s"
            f" (goal <= 180 s on a quiet machine); {load()}"
        )
    keys = ["model", "init", "task", "site", "seed", "variant", "split", "metric"]
    joined = runs["float32"].join(runs["float16"], on=keys, suffix="_half")
    diff = (joined["value"] - joined["value_half"]).abs()
    print(
        f"  float16 vs float32 features: {joined.height} scores, largest |difference|"
        f" {100 * float(diff.max() or 0):.2f} points, mean {100 * float(diff.mean() or 0):.3f}"
    )
    assert joined.height == runs["float32"].height
    (wall, peak), (wall_half, peak_half) = measured["float32"], measured["float16"]
    figures.record(
        ratio=None,
        against="an end-to-end job (goals: peak RSS <= 2 GiB, wall <= 180 s)",
        times={"float32": wall, "float16": wall_half},
        peak_rss_mib=peak * 1024,
        peak_rss_float16_mib=peak_half * 1024,
        largest_score_difference_float16=float(diff.max() or 0),
    )


def main(out: str, dtype: str) -> None:
    """Run `lingprobe demo --quiet --out OUT`, with float16 features when asked."""
    import torch

    import suites.commands.demo as demo
    from suites.cli import main as cli

    if dtype == "float16":
        run_edge = demo.run_edge

        def half(*args, **kwargs):  # type: ignore[no-untyped-def]
            return run_edge(*args, store_dtype=torch.float16, **kwargs)

        demo.run_edge = half  # type: ignore[assignment]
    sys.exit(cli(["demo", "--quiet", "--out", out]))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
