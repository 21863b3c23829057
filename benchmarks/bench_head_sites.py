"""Head sites of SmolLM2 against its residual sites: 2,000 EWT words, time and peak memory.

Each side runs in a fresh process (`python -m benchmarks.bench_head_sites MODE`), which loads
SmolLM2-135M and the first 2,000 EWT train words, warms up on 4 of them, and then extracts:
- `heads`: `subject.features(items, sites.every_head(subject))`, 30 layers x 9 heads = 270 sites
  of 64 values each;
- `residual`: `subject.features(items, sites.every_layer(subject))`, the 31 residual sites of
  576 values each (the sites a user reads without heads: the alternative).

Each side runs once per round (`ROUNDS`), alternating, and the faster run of each is compared
(the machine is shared; the load average is printed). Printed per side: the wall time of the
extraction alone, and the process's peak RSS (the kernel's high-water mark, MiB) with its
increase over the state after loading and the warm-up. The goal: heads within 2x the residual
sites' time. Needs EWT train (`LINGPROBE_DATA`).
"""

from __future__ import annotations

import json
import sys
import time

import pytest

from benchmarks.ewt_sample import ewt_path
from benchmarks.extract_common import load
from benchmarks.feature_set_common import in_fresh_process
from benchmarks.figures import Figures
from benchmarks.memory_probe import peak_mib, reset_peak

N_WORDS = 2_000
MODES = ("residual", "heads")
ROUNDS = 1  # a round is two fresh SmolLM2 extractions of ~5 minutes each on 2 busy cores
GOAL = 2.0  # heads' time over the residual sites' time


def probe(mode: str) -> dict[str, float]:
    """One side in this process: peak RSS and time of the extraction alone."""
    from benchmarks.ewt_sample import first_words
    from internals import load_subject, sites
    from internals.packaged import SMOLLM2

    items = first_words(N_WORDS)
    subject = load_subject(SMOLLM2)
    chosen = sites.every_head(subject) if mode == "heads" else sites.every_layer(subject)
    subject.features(items[:4], chosen, progress=False)
    base = reset_peak()
    start = time.perf_counter()
    out = subject.features(items, chosen, progress=False)
    seconds = time.perf_counter() - start
    peak = peak_mib()
    assert tuple(out.shape) == (N_WORDS, len(chosen), subject.site_dim(chosen[0]))
    return {
        "peak_mib": peak,
        "increase_mib": peak - base,
        "seconds": seconds,
        "sites": len(chosen),
        "values_per_item": len(chosen) * subject.site_dim(chosen[0]),
    }


@pytest.mark.full
@pytest.mark.needs_data
def test_head_sites_vs_residual_sites(figures: Figures) -> None:
    ewt_path("train")  # skip early, with a message, when the full treebank is not there
    runs: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    for _ in range(ROUNDS):
        for mode in MODES:
            runs[mode].append(in_fresh_process("benchmarks.bench_head_sites", mode))
            print(f"\n[head sites] {mode}: {runs[mode][-1]}", flush=True)
    best = {mode: min(rows, key=lambda row: row["seconds"]) for mode, rows in runs.items()}
    ratio = best["heads"]["seconds"] / best["residual"]["seconds"]
    print(f"\n[head sites] SmolLM2-135M, {N_WORDS} EWT train words ({load()})")
    print(f"{'sites':>9} {'count':>6} {'values':>7} {'seconds':>8} {'peak MiB':>9} {'incr MiB':>9}")
    for mode, row in best.items():
        print(
            f"{mode:>9} {row['sites']:>6.0f} {row['values_per_item']:>7.0f}"
            f" {row['seconds']:>8.1f} {row['peak_mib']:>9.0f} {row['increase_mib']:>9.0f}"
        )
    print(f"heads / residual time: {ratio:.2f}x (goal <= {GOAL}x; fastest of {ROUNDS} each)")
    figures.record(
        ratio=ratio,
        against="the 31 residual sites of SmolLM2 on the same words (time)",
        at_most=GOAL,
        times={mode: row["seconds"] for mode, row in best.items()},
        peak_rss_mib=best["heads"]["peak_mib"],
        peak_rss_residual_mib=best["residual"]["peak_mib"],
        increase_heads_mib=best["heads"]["increase_mib"],
        increase_residual_mib=best["residual"]["increase_mib"],
        all_seconds={mode: [row["seconds"] for row in rows] for mode, rows in runs.items()},
    )
    assert ratio <= GOAL, f"head sites took {ratio:.2f}x the residual sites' time"


if __name__ == "__main__":
    print(json.dumps(probe(sys.argv[1])))
