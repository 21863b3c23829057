"""Shared pieces of the extraction benchmarks: timers, the model's own batches, fresh processes.

Not a benchmark itself. The machine is shared: every comparison is timed in the same run and
printed as a ratio next to the load average.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from internals import SpanItem
from internals.backends.base import ModelBatch
from internals.batching import collate
from internals.reading import Reading
from internals.transformer_subject import TransformerSubject

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(os.environ.get("LINGPROBE_BENCH_OUT", ROOT / "results" / "benchmarks"))


def median_of(fn: Callable[[], object], rounds: int = 3) -> float:
    """Median wall time of `rounds` calls (after one warm-up call)."""
    fn()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved(fns: Sequence[Callable[[], object]], rounds: int = 5) -> list[list[float]]:
    """Wall times of every function over `rounds` rounds, each round calling them in turn (after
    one warm-up call each), so drift in the machine's speed hits them alike. Compare `min`s
    (the best of several repeats) and medians."""
    for fn in fns:
        fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for fn, out in zip(fns, times):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return times


def ratio_line(ours: list[float], bare: list[float]) -> str:
    """`best x (median y)` of ours against bare."""
    best = min(ours) / min(bare)
    middle = statistics.median(ours) / statistics.median(bare)
    return f"{best:.3f}x bare (median of rounds {middle:.3f}x)"


def plain_model(spec: str) -> Any:
    """The subject's model loaded again as plain Hugging Face code (no hooks, no wrappers): the
    bare forward a user without lingprobe runs."""
    import transformers

    from internals.packaged import packaged_path

    folder = packaged_path(spec)
    assert folder is not None, f"{spec} is not installed"
    return transformers.AutoModel.from_pretrained(folder, dtype=torch.float32).eval()


def load() -> str:
    """The 1-minute load average, to read timings against."""
    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"


def model_batches(
    subject: TransformerSubject, items: Sequence[SpanItem], reading: Reading | None = None
) -> list[ModelBatch]:
    """The padded batches `features` runs for `items` (what a bare forward pass gets too)."""
    plan, _ = subject.plan(items, reading or Reading())
    lengths = [len(row.input_ids) for row in plan.rows]
    parts = list(subject.layout.parts)
    return [
        collate([plan.rows[i] for i in index], subject._padding(), parts, subject.device)
        for index in subject.batches(lengths)
    ]


def fresh_process(*args: str) -> dict[str, Any]:
    """Run `python -m benchmarks.memory_probe ARGS` and return its JSON line."""
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.memory_probe", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])
