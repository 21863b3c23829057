"""End-to-end local sweeps: results, report, resuming after a kill, and failing units."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from suites.cli import main
from suites.schema import RESULTS_SCHEMA, SCORE_SCHEMA
from suites.sweep import load_config, plan_table, plan_units, read_log, run_sweep
from tests.suites.sweep.conftest import write_sweep

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_local_sweep_fills_the_leaderboard(local_sweep):
    summary = local_sweep[1]
    assert (summary.planned, summary.ran, summary.done, summary.failed) == (6, 6, 6, 0)
    board = summary.leaderboard
    out = summary.out
    assert pl.read_parquet(out / "leaderboard.parquet").equals(board)
    rows = pl.read_parquet(out / "results.parquet")
    assert rows.columns == list(RESULTS_SCHEMA) and board.columns == list(SCORE_SCHEMA)
    assert board["unit"].n_unique() == 6 and set(board["model"]) == {"minilm", "glove:6B.50d"}
    holmes = board.filter(pl.col("suite") == "holmes")
    headline = holmes.filter((pl.col("metric") == "macro_f1") & (pl.col("split") == "test"))
    assert headline.filter(pl.col("mask") == 1.0).height == 2 * 2
    tests = holmes.filter((pl.col("metric") == "n_items") & (pl.col("split") == "test"))
    assert (tests["score"] == 24).all() and (headline["n_seeds"] == 2).all()
    edge = board.filter(pl.col("suite") == "edge")
    assert set(edge["split"]) == {"test", "test:mem_exact", "test:mem_freq", "test:mem_uniform"}
    assert set(edge["task"]) == {"ewt-upos"} and set(edge["site"]) == {"encoder.6", "static.0"}
    scores = board.filter(pl.col("metric").is_in(["accuracy", "macro_f1"]))
    assert scores["score"].is_between(0, 1).all()
    upos = edge.filter(pl.col("split") == "test").sort("model")["score"].to_list()
    assert upos[1] > upos[0]  # MiniLM's last layer beats GloVe on UPOS
    for unit in board["unit"].unique():  # each unit folder is the suite's own run folder
        manifest = json.loads((out / "units" / unit / "manifest.json").read_text())
        assert manifest["suite"] in {"holmes", "edge"}
    log = read_log(out)
    loads = log.filter((pl.col("event") == "done") & pl.col("loaded_model"))
    assert sorted(loads["model"]) == ["glove:6B.50d", "minilm"]  # each model loaded once


@pytest.mark.slow
def test_report_and_rerun(local_sweep, capsys):
    config, summary = local_sweep
    out = summary.out
    assert main(["report", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "6 units planned, 6 done, 0 failed" in printed and "ewt-upos" in printed
    for name in ("scores.png", "holmes/ranking.parquet", "edge/drops.parquet"):
        assert (out / name).stat().st_size > 0, name
    events = read_log(out).height
    again = run_sweep(config, progress=False)
    assert (again.skipped, again.ran) == (6, 0) and again.leaderboard.equals(summary.leaderboard)
    assert read_log(out).height == events  # no unit started again


@pytest.mark.slow
def test_dry_run_estimates_from_finished_units(local_sweep):
    config = local_sweep[0]
    bigger = config.with_name("bigger.toml")
    bigger.write_text(
        config.read_text().replace(
            '"blimp-anaphor_number_agreement"]',
            '"blimp-anaphor_number_agreement", "blimp-causative"]',
        )
    )
    table = plan_table(load_config(bigger), plan_units(load_config(bigger)))
    assert table.filter(pl.col("status") == "done").height == 6
    new = table.filter(pl.col("status") == "to run")
    assert new["group"].to_list() == ["blimp-causative"] * 2
    assert (new["est_seconds"] > 0).all()


@pytest.mark.slow
def test_killed_sweep_reruns_only_the_missing_units(tmp_path, local_sweep):
    config = write_sweep(tmp_path, "killed")
    out = tmp_path / "killed"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    errors = tmp_path / "stderr.txt"
    with open(errors, "wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "suites.cli", "sweep", str(config), "--quiet"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        deadline = time.monotonic() + 240
        while not list((out / "results").glob("*.parquet")):
            assert process.poll() is None, errors.read_text()[-2000:]
            assert time.monotonic() < deadline, "no unit finished in 4 minutes"
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait()
    finished = {p.stem for p in (out / "results").glob("*.parquet")}
    planned = {u.id for u in plan_units(load_config(config))}
    assert 1 <= len(finished) < len(planned), "the sweep ended before it could be killed"

    assert main(["sweep", str(config), "--quiet"]) == 0
    log = read_log(out)
    runs = log["run"].unique(maintain_order=True).to_list()
    assert len(runs) == 2
    second = runs[1]
    started = set(log.filter((pl.col("run") == second) & (pl.col("event") == "start"))["unit"])
    assert started == planned - finished
    reference = local_sweep[1].leaderboard
    assert pl.read_parquet(out / "leaderboard.parquet").equals(reference)


@pytest.mark.slow
def test_a_failing_unit_is_reported_and_the_others_finish(tmp_path, capsys):
    config = write_sweep(
        tmp_path,
        "failing",
        models=("no-such-model", "glove:6B.50d"),
        edge=False,
        holmes_tasks=["blimp-adjunct_island"],
    )
    assert main(["sweep", str(config), "--quiet"]) == 1
    printed = capsys.readouterr()
    assert "failed units:" in printed.out and "ModelNotFoundError" in printed.out
    out = tmp_path / "failing"
    failures = json.loads((out / "failures.json").read_text())
    assert [f["model"] for f in failures] == ["no-such-model"]
    assert failures[0]["error_type"] == "ModelNotFoundError" and failures[0]["tasks"] == [
        "blimp-adjunct_island"
    ]
    assert "no-such-model" in failures[0]["message"]
    assert "Traceback" in (out / failures[0]["traceback"]).read_text()
    board = pl.read_parquet(out / "leaderboard.parquet")
    assert board["model"].unique().to_list() == ["glove:6B.50d"]
    summary = run_sweep(config, progress=False)  # the failed unit is retried, the done one not
    assert (summary.skipped, summary.ran, summary.failed) == (1, 1, 1)
