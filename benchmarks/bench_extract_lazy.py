"""Lazy extraction's peak memory: MiniLM at every layer (7 sites), 10k and 100k EWT words.

Each configuration runs in a fresh process (`python -m benchmarks.bench_extract_lazy MODE N
STORE`), which loads the model and the items, warms up, and then extracts:
- `memory`: `subject.features(items, every layer)`, one float32 tensor in memory (what users run
  without a store: the alternative);
- `lazy`: `subject.features(items, every layer, store=STORE, lazy=True)` into an empty store,
  which writes the shards and returns a `FeatureSet`.

Printed per configuration: the process's peak RSS (the kernel's high-water mark, MiB), its
increase over the state after loading and the warm-up, and the wall time. The goal: lazy's peak
at 100k within 1.2x its peak at 10k; the in-memory path's peak is printed beside it with the
ratio. The returned in-memory features alone take items x 7 x 384 x 4 bytes (1,025 MiB at 100k).
Needs the full EWT train split (`LINGPROBE_DATA`); the machine is shared, so times are noisy
(the load average is printed).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import pytest

from benchmarks.ewt_sample import ewt_path
from benchmarks.extract_common import load
from benchmarks.feature_set_common import in_fresh_process
from benchmarks.figures import Figures
from benchmarks.memory_probe import peak_mib, reset_peak

SIZES = (10_000, 100_000)
MODES = ("memory", "lazy")
GOAL = 1.2  # lazy peak at 100k over lazy peak at 10k


def probe(mode: str, n: int, store: Path) -> dict[str, float]:
    """One configuration in this process: peak RSS and time of the extraction alone."""
    from benchmarks.ewt_sample import first_words
    from internals import load_subject, sites
    from internals.packaged import MINILM

    items = first_words(n)
    subject = load_subject(MINILM)
    every = sites.every_layer(subject)
    warm = store / "warm-up"
    subject.features(items[:4], every, store=warm, progress=False, lazy=mode == "lazy")
    base = reset_peak()
    start = time.perf_counter()
    if mode == "lazy":
        out = subject.features(items, every, store=store / "store", progress=False, lazy=True)
    else:
        out = subject.features(items, every, progress=False)
    seconds = time.perf_counter() - start
    peak = peak_mib()
    assert tuple(out.shape) == (n, len(every), subject.dim)
    return {"peak_mib": peak, "increase_mib": peak - base, "base_mib": base, "seconds": seconds}


def fresh_process(mode: str, n: int) -> dict[str, float]:
    """`probe(mode, n)` in a child process with its own empty store folder."""
    with tempfile.TemporaryDirectory(prefix="lingprobe-lazy-bench-") as store:
        return in_fresh_process("benchmarks.bench_extract_lazy", mode, str(n), store)


@pytest.mark.full
@pytest.mark.needs_data
def test_lazy_extraction_memory(figures: Figures) -> None:
    ewt_path("train")  # skip early, with a message, when the full treebank is not there
    rows = {(mode, n): fresh_process(mode, n) for n in SIZES for mode in MODES}
    print(f"\n[lazy extraction] MiniLM, every layer (7 sites), EWT train words ({load()})")
    print(f"{'mode':>8} {'items':>8} {'peak MiB':>9} {'increase MiB':>13} {'seconds':>8}")
    for (mode, n), row in rows.items():
        print(
            f"{mode:>8} {n:>8} {row['peak_mib']:>9.0f} {row['increase_mib']:>13.0f}"
            f" {row['seconds']:>8.1f}"
        )
    small, big = (rows[("lazy", n)] for n in SIZES)
    growth = big["peak_mib"] / small["peak_mib"]
    print(
        f"lazy peak 100k / 10k: {growth:.2f}x (goal <= {GOAL}x; increase over the loaded"
        f" state {big['increase_mib']:.0f} / {small['increase_mib']:.0f} MiB)"
    )
    memory_small, memory = (rows[("memory", n)] for n in SIZES)
    print(
        f"in-memory peak / lazy peak at 100k: {memory['peak_mib'] / big['peak_mib']:.2f}x;"
        f" in-memory 100k / 10k: {memory['peak_mib'] / memory_small['peak_mib']:.2f}x;"
        f" lazy time / in-memory time at 100k: {big['seconds'] / memory['seconds']:.2f}x"
    )
    figures.record(
        ratio=growth,
        against="lazy extraction's own peak RSS at 10k words (peak at 100k / peak at 10k)",
        at_most=GOAL,
        times={f"{mode}_{n}": row["seconds"] for (mode, n), row in rows.items()},
        peak_rss_mib=big["peak_mib"],
        peak_rss_lazy_mib={n: rows[("lazy", n)]["peak_mib"] for n in SIZES},
        peak_rss_memory_mib={n: rows[("memory", n)]["peak_mib"] for n in SIZES},
        increase_lazy_mib={n: rows[("lazy", n)]["increase_mib"] for n in SIZES},
        increase_memory_mib={n: rows[("memory", n)]["increase_mib"] for n in SIZES},
        memory_over_lazy_peak_100k=memory["peak_mib"] / big["peak_mib"],
        memory_growth=memory["peak_mib"] / memory_small["peak_mib"],
    )
    assert growth <= GOAL, f"lazy extraction's peak grew {growth:.2f}x from 10k to 100k items"


if __name__ == "__main__":
    print(json.dumps(probe(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]))))
