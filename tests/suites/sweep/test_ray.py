"""The Ray executor on a local Ray instance with 2 CPUs: the same numbers as the local one,
each model loaded once by one worker."""

from __future__ import annotations

import polars as pl
import pytest

from suites.sweep import read_log, run_sweep
from tests.suites.sweep.conftest import write_sweep

pytest.importorskip("ray")


@pytest.mark.slow
def test_ray_sweep_equals_the_local_sweep(ray_instance, tmp_path, local_sweep):
    config = write_sweep(tmp_path, "ray", executor="ray")
    summary = run_sweep(config, progress=False)
    assert (summary.planned, summary.ran, summary.done, summary.failed) == (6, 6, 6, 0)
    reference = local_sweep[1].leaderboard
    assert summary.leaderboard.equals(reference)  # same unit ids, same numbers, same order
    assert pl.read_parquet(tmp_path / "ray" / "leaderboard.parquet").equals(reference)
    done = read_log(tmp_path / "ray").filter(pl.col("event") == "done")
    per_model = done.group_by("model").agg(
        workers=pl.col("worker").n_unique(), loads=pl.col("loaded_model").sum()
    )
    assert per_model.sort("model").rows() == [("glove:6B.50d", 1, 1), ("minilm", 1, 1)]
    local_workers = set(read_log(local_sweep[1].out)["worker"].drop_nulls())
    assert not set(done["worker"]) & local_workers  # the units ran in Ray worker processes
    started = read_log(tmp_path / "ray").filter(pl.col("event") == "start")
    assert set(started["executor"]) == {"ray"}


@pytest.mark.slow
def test_ray_failures_are_recorded(ray_instance, tmp_path):
    config = write_sweep(
        tmp_path,
        "ray-failing",
        executor="ray",
        models=("no-such-model", "glove:6B.50d"),
        edge=False,
        holmes_tasks=["blimp-adjunct_island"],
    )
    summary = run_sweep(config, progress=False)
    assert (summary.done, summary.failed) == (1, 1)
    failure = summary.failures.row(0, named=True)
    assert (failure["model"], failure["error_type"]) == ("no-such-model", "ModelNotFoundError")
    assert summary.leaderboard["model"].unique().to_list() == ["glove:6B.50d"]
