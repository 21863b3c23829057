"""Benchmark results as data: every benchmark writes its figures as JSON under `.benchmarks/`.

A benchmark takes the `figures` fixture (`benchmarks/conftest.py`) and calls `figures.record`
once with its headline ratio against what a user would otherwise use, the goal, its times and
any other numbers worth keeping:

    def test_bench_thing(figures: Figures) -> None:
        ours, theirs = timed(run_ours), timed(run_theirs)
        figures.record(
            ratio=theirs.wall / ours.wall,
            against="a loop of scikit-learn LogisticRegression",
            at_least=4.0,
            times={"lingprobe": ours.wall, "scikit-learn": theirs.wall},
        )

The fixture writes `.benchmarks/figures/<file>__<test>.json` (the latest run of each test;
`LINGPROBE_BENCH_FIGURES` moves the folder) with the machine, the commit, the load average and
the process's peak resident memory added; a test that records nothing fails, so no benchmark is
missing from the performance page (`python -m benchmarks.performance_page`). `ratio` is a
speed-up (alternative / lingprobe, goal `at_least`) or an overhead (lingprobe / alternative,
goal `at_most`), as the benchmark's docstring says.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import re
import resource
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = 1


def figures_dir() -> Path:
    """Where the JSON goes: `$LINGPROBE_BENCH_FIGURES` or `.benchmarks/figures/` in the clone."""
    return Path(os.environ.get("LINGPROBE_BENCH_FIGURES", ROOT / ".benchmarks" / "figures"))


def commit() -> dict[str, Any]:
    """The checked-out commit and whether tracked files differ from it (None outside git)."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip()

    head = git("rev-parse", "--short=10", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": head, "dirty": None if status is None else bool(status)}


def machine() -> dict[str, Any]:
    """CPU model, CPUs this process may use, memory, torch, and the GPU where one is visible."""
    model = platform.processor() or platform.machine()
    try:
        text = Path("/proc/cpuinfo").read_text()
        found = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
        model = found.group(1).strip() if found else model
    except OSError:
        pass
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        memory = None
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return {
        "cpu": model,
        "cpus": cpus,
        "memory_gib": None if memory is None else round(memory, 1),
        "gpu": gpu,
        "system": platform.system(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
    }


@dataclass
class Figures:
    """The figures of one benchmark test, written as JSON by the `figures` fixture."""

    benchmark: str  # "<file stem>::<test name>"
    path: Path  # the benchmark's source file
    values: dict[str, Any] = field(default_factory=dict)

    def record(
        self,
        *,
        ratio: float | None,
        against: str,
        at_least: float | None = None,
        at_most: float | None = None,
        times: dict[str, float] | None = None,
        peak_rss_mib: float | None = None,
        **figures: Any,
    ) -> None:
        """The headline `ratio` against `against` (what a user would otherwise use) with its
        goal (`at_least` for a speed-up, `at_most` for an overhead), `times` in seconds, the
        peak resident memory of a job measured in its own process, and any other figures."""
        met = None
        if ratio is not None and (at_least is not None or at_most is not None):
            met = (at_least is None or ratio >= at_least) and (at_most is None or ratio <= at_most)
        self.values = {
            "ratio": ratio,
            "against": against,
            "at_least": at_least,
            "at_most": at_most,
            "met": met,
            "times_s": times or {},
            "peak_rss_mib": peak_rss_mib,
            "figures": figures,
        }

    def write(self) -> Path:
        """The JSON file, with machine, commit, date, load average and process peak memory."""
        if not self.values:
            raise RuntimeError(f"{self.benchmark}: the benchmark recorded no figures")
        load = os.getloadavg() if hasattr(os, "getloadavg") else None
        peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        stem, _, test = self.benchmark.partition("::")
        data = {
            "schema": SCHEMA,
            "benchmark": self.benchmark,
            "file": self.path.resolve().relative_to(ROOT).as_posix(),
            **self.values,
            "process_peak_rss_mib": round(peak_kib / 1024, 1),
            "load_average": None if load is None else [round(x, 2) for x in load],
            "machine": machine(),
            **commit(),
            "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{stem}__{test}").strip("_")
        out = figures_dir() / f"{name}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(data, indent=2, default=float) + "\n")
        tmp.replace(out)
        return out
