"""Sweep overhead: `run_sweep` (local executor) vs the same units run by hand in one process.

By hand = what a user writes without the sweep: load each model once, call `run_holmes` on
each Holmes dataset and `run_edge` + `save_unit` on the edge task, with the same settings,
threads and stores. The sweep adds planning, per-unit records and logs, the merge and the
progress bookkeeping (goal: <= 5 % over by hand). Rounds alternate the two, each into a fresh
folder (features are computed every time); medians of wall and process CPU time are printed,
and the by-hand scores are checked equal to the sweep's. The Ray executor (2 CPUs, Ray
started beforehand) is timed on the same sweep for reference.

Run: `nox -s bench -- benchmarks/bench_sweep.py`, or
`python -m pytest benchmarks/bench_sweep.py -o addopts= -o python_files='bench_*.py' -s`.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import polars as pl
import pytest
import torch

from benchmarks.figures import Figures
from internals import load_subject
from internals import sites as site_rules
from suites.datasets import as_source
from suites.edge import read_conllu
from suites.edge.experiment import EdgeConfig, run_edge
from suites.edge.report import save_unit
from suites.holmes.run import HolmesConfig, run_holmes
from suites.suite import Limits, with_probe
from suites.sweep import read_log, run_sweep

MODELS = ("minilm", "glove:6B.50d")
BLIMP = ("blimp-adjunct_island", "blimp-anaphor_number_agreement")
SEEDS, EPOCHS, LR, PAIRS, SENTENCES = 3, 5, 0.01, 400, 150
ROUNDS = 3


def sweep_config(folder: Path, out: str, data: str, executor: str = "local") -> Path:
    """The benchmark sweep: 2 models x (2 BLiMP paradigms + EWT UPOS)."""
    text = f"""
[sweep]
out = "{folder / out}"
executor = "{executor}"
data = "{data}"

[[models]]
name = "{MODELS[0]}"

[[models]]
name = "{MODELS[1]}"

[[suites]]
suite = "holmes"
tasks = {list(BLIMP)!r}

[[suites]]
suite = "edge"
task = "conllu:upos"
train = "ud-english-ewt:train"
test = "ud-english-ewt:dev"
layers = "last"

[probe]
seeds = {SEEDS}
epochs = {EPOCHS}
lr = {LR}
mdl = false

[limits]
blimp_pairs = {PAIRS}
sentences = {SENTENCES}
""".replace("'", '"')
    path = folder / f"{out}.toml"
    path.write_text(text)
    return path


def by_hand(folder: Path, data: str) -> pl.DataFrame:
    """The same units without the sweep; returns the Holmes scores."""
    torch.set_num_threads(1)  # the sweep's [resources] cpus = 1
    holmes = with_probe(
        HolmesConfig(limits=Limits(sentences=SENTENCES, blimp_pairs=PAIRS)),
        seeds=SEEDS,
        mdl=False,
        epochs=EPOCHS,
        lr=LR,
    )
    edge = with_probe(EdgeConfig(), seeds=SEEDS, epochs=EPOCHS, lr=LR)
    source = as_source(data)
    boards = []
    for name in MODELS:
        subject = load_subject(name)
        for task in BLIMP:
            boards.append(
                run_holmes(
                    [subject],
                    [task],
                    folder / f"{name}-{task}",
                    config=holmes,
                    data=data,
                    store=folder / "store",
                    progress=False,
                    summary=False,
                ).with_columns(model=pl.lit(name))
            )
        train_file = source.path("ud-english-ewt", "train")
        train = read_conllu(train_file, "upos", limit_sentences=SENTENCES)
        test_file = source.path("ud-english-ewt", "dev")
        test = read_conllu(test_file, "upos", split="test", limit_sentences=SENTENCES)
        results = run_edge(
            [subject],
            train,
            test,
            site_rules.last(subject),
            edge,
            store=folder / "store",
            progress=False,
        )
        save_unit(results, folder / f"{name}-upos", legacy_keys=False)
    return pl.concat(boards)


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall and process CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


KEYS = ["model", "task", "site", "mask", "metric"]


def holmes_scores(board: pl.DataFrame) -> pl.DataFrame:
    """Test scores keyed by the results schema's names (the Holmes leaderboard says `dataset`
    and `fraction` for `task` and `mask`)."""
    board = board.rename({"dataset": "task", "fraction": "mask"}, strict=False)
    if "split" in board.columns:
        board = board.filter(pl.col("split") == "test")
    return board.select(*KEYS, "score").sort(KEYS)


@pytest.fixture(scope="module")
def data() -> str:
    return "samples"  # the shipped data: BLiMP paradigms and the EWT sample


@pytest.mark.full
def test_sweep_overhead_local(figures: Figures, data):
    times: dict[str, list[tuple[float, float]]] = {"sweep": [], "hand": []}
    with tempfile.TemporaryDirectory() as root:
        base = Path(root)
        by_hand(base / "warm-hand", data)  # warm-up: imports, file caches, model files
        run_sweep(sweep_config(base, "warm-sweep", data), progress=False)
        driver = []  # sweep wall time outside its units (plan, records, merge, gc between models)
        for r in range(ROUNDS):
            config = sweep_config(base, f"sweep-{r}", data)
            times["sweep"].append(timed(partial(run_sweep, config, progress=False)))
            units = read_log(base / f"sweep-{r}").filter(pl.col("event") == "done")["seconds"]
            driver.append(times["sweep"][-1][0] - float(units.sum()))
            times["hand"].append(timed(partial(by_hand, base / f"hand-{r}", data)))
        swept = pl.read_parquet(base / "sweep-0" / "leaderboard.parquet")
        hand = by_hand(base / "check", data)
        theirs = holmes_scores(hand)
        paired = theirs.join(holmes_scores(swept.filter(pl.col("suite") == "holmes")), on=KEYS)
        assert paired.height == theirs.height > 0, "the sweep lacks scores of the hand-written run"
        assert (paired["score"] - paired["score_right"]).abs().max() == 0, (
            "the sweep and the hand-written run disagree"
        )
    wall = {k: statistics.median(t[0] for t in v) for k, v in times.items()}
    cpu = {k: statistics.median(t[1] for t in v) for k, v in times.items()}
    figures.record(
        ratio=wall["sweep"] / wall["hand"],
        against="the same units run by hand in one process",
        at_most=1.05,
        times={"sweep": wall["sweep"], "by_hand": wall["hand"]},
        cpu_ratio=cpu["sweep"] / cpu["hand"],
        driver_s=statistics.median(driver),
    )
    print(f"\n[sweep] 2 models x 3 tasks (6 units), {ROUNDS} alternating rounds, medians")
    for kind, label in (("sweep", "lingprobe sweep (local)"), ("hand", "same units by hand")):
        print(f"  {label:26s} wall {wall[kind]:7.2f} s   cpu {cpu[kind]:7.2f} s")
    print(
        f"  sweep time outside its units (median): {statistics.median(driver):.2f} s"
        f" = {100 * statistics.median(driver) / wall['hand']:.1f} % of by hand"
    )
    print(
        f"  overhead: wall {100 * (wall['sweep'] / wall['hand'] - 1):+.1f} %,"
        f" cpu {100 * (cpu['sweep'] / cpu['hand'] - 1):+.1f} % (goal <= 5 %)"
    )
    print(
        "  rounds (wall sweep / hand): "
        + ", ".join(
            f"{s[0]:.1f}/{h[0]:.1f}" for s, h in zip(times["sweep"], times["hand"], strict=True)
        )
    )


@pytest.mark.full
def test_ray_executor_time(figures: Figures, data):
    ray = pytest.importorskip("ray")
    with tempfile.TemporaryDirectory() as root:
        base = Path(root)
        start = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        init = time.perf_counter() - start
        try:
            run_ray: list[float] = []

            def ray_round() -> None:
                config = sweep_config(base, f"ray-{len(run_ray)}", data, "ray")
                run_ray.append(timed(lambda: run_sweep(config, progress=False))[0])

            ray_round()
            ray_round()
            local = timed(lambda: run_sweep(sweep_config(base, "local", data), progress=False))[0]
            assert pl.read_parquet(base / "ray-0" / "leaderboard.parquet").equals(
                pl.read_parquet(base / "local" / "leaderboard.parquet")
            )
        finally:
            ray.shutdown()
    print(
        f"\n[sweep] Ray executor, 2 CPUs: ray.init {init:.1f} s; sweep {run_ray[0]:.1f} s and"
        f" {run_ray[1]:.1f} s (2 workers, one per model, each starting and loading its model)"
        f" vs local {local:.1f} s; leaderboards equal"
    )
    figures.record(
        ratio=min(run_ray) / local,
        against="the local executor on the same sweep (Ray's start-up included)",
        times={"ray_init": init, "ray_first": run_ray[0], "ray_second": run_ray[1], "local": local},
    )
