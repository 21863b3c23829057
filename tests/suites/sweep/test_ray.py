"""The Ray executor on a local Ray instance with 2 CPUs: the same numbers as the local one,
each model loaded once by one worker; a worker that dies is restarted and its unit runs again
from a clean folder, up to `retries` times."""

from __future__ import annotations

import json
import os

import polars as pl
import pytest

from suites.sweep import Unit, UnitOutcome, by_model, load_config, plan_units, read_log, run_sweep
from suites.sweep.executor_ray import run_ray
from suites.sweep.plan import context_of
from suites.sweep.progress import SweepProgress
from suites.sweep.ray_worker import RayWorker
from suites.sweep.records import Records
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


class DiesOnce(RayWorker):
    """Writes into its unit folder and dies before the unit ends, unless it was restarted."""

    def run(self, unit: Unit) -> UnitOutcome:
        if not self.restarted:
            folder = self.context.folder(unit.id)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "half-written.txt").write_text(str(os.getpid()))
            os._exit(1)
        return super().run(unit)


class AlwaysDies(RayWorker):
    """Dies in every unit it is given."""

    def run(self, unit: Unit) -> UnitOutcome:
        os._exit(1)


def run_with(actor_class: type[RayWorker], config_path, retries: int) -> list[Unit]:
    """Run a sweep's units on `actor_class` workers, as `run_sweep` does; its units."""
    config = load_config(config_path)
    units = plan_units(config)
    records = Records(config.out)
    bar = SweepProgress(len(units), 0, False)
    context = context_of(config, progress=False)
    run_ray(by_model(units), context, records, bar, config.resources, retries, actor_class)
    return units


@pytest.mark.slow
def test_a_worker_that_dies_is_restarted_and_its_unit_runs_again_from_a_clean_folder(
    ray_instance, tmp_path, local_sweep
):
    config = write_sweep(
        tmp_path, "dies-once", executor="ray", models=("glove:6B.50d",), edge=False
    )
    (unit, other) = run_with(DiesOnce, config, retries=1)
    out = tmp_path / "dies-once"
    records = Records(out)
    assert records.is_done(unit.id) and records.is_done(other.id)
    # the restarted worker removed what the dead one half-wrote before running the unit again
    assert not (out / "units" / unit.id / "half-written.txt").exists()
    assert (out / "units" / unit.id / "manifest.json").exists()
    log = read_log(out)
    assert log.filter(pl.col("event") == "failed").height == 0
    done = log.filter(pl.col("event") == "done").sort("unit")
    restarted = dict(zip(done["unit"], done["restarted"], strict=True))
    assert restarted == {unit.id: True, other.id: False}  # one death, one retry
    local = pl.read_parquet(local_sweep[1].out / "results" / f"{unit.id}.parquet")
    again = pl.read_parquet(records.result_path(unit.id))
    assert again.sort(pl.all()).equals(local.sort(pl.all()))  # the suite's row order may vary


@pytest.mark.slow
def test_a_worker_that_dies_more_than_retries_times_fails_its_unit_with_the_cause(
    ray_instance, tmp_path
):
    config = write_sweep(
        tmp_path,
        "always-dies",
        executor="ray",
        models=("glove:6B.50d",),
        edge=False,
        holmes_tasks=["blimp-adjunct_island"],
    )
    (unit,) = run_with(AlwaysDies, config, retries=1)
    failure = json.loads(Records(tmp_path / "always-dies").failure_path(unit.id).read_text())
    assert failure["error_type"] in ("ActorDiedError", "RayActorError")
    assert failure["message"].startswith("its Ray worker died 2 times ([sweep] retries = 1)")
