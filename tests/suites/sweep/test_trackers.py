"""Experiment trackers: a sweep logged to a local MLflow store has one run per unit with its
settings, scores per layer and files; `lingprobe run --log-to wandb` in offline mode writes one
W&B run per unit; a missing tracker package is one line naming the extra, before anything runs.

The expected scores are computed here from each unit's result rows by hand (seed means of the
task probes, task minus control), not with the code that logs them. Nothing reaches a network:
MLflow writes a `file:` store under tmp_path and W&B runs with `WANDB_MODE=offline`.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import polars as pl
import pytest

from suites.cli import main
from suites.registry import SUITES
from suites.sweep import load_config, read_log, run_sweep
from suites.sweep.records import Records
from suites.trackers import TrackerError, open_tracker
from tests.suites.sweep.conftest import sweep_toml

EDGE_FLAGS = [
    *("run", "edge", "--models", "glove:6B.50d", "--data", "samples", "--quiet"),
    *("--limit-sentences", "20", "--seeds", "2", "--epochs", "2", "--no-mdl"),
    *("--task", "conllu:upos", "--train-file", "ud-english-ewt:train"),
    *("--test-file", "ud-english-ewt:dev"),
]


def expected_scores(rows: pl.DataFrame) -> dict[str, dict[int, float]]:
    """`TASK/METRIC` and `TASK/selectivity` -> layer -> value, by hand from one unit's rows:
    the suite's first headline metric present, test split, all of train, mean over seeds."""
    suite = rows["suite"][0]
    test = rows.filter((pl.col("split") == "test") & pl.col("layer").is_not_null())
    found: dict[str, dict[int, float]] = {}
    for task in test["task"].unique().to_list():
        mine = test.filter(pl.col("task") == task)
        metric = next(m for m in SUITES[suite].headline_metrics if m in set(mine["metric"]))
        mine = mine.filter((pl.col("metric") == metric) & (pl.col("mask") == mine["mask"].max()))
        for layer in mine["layer"].unique().to_list():
            at = mine.filter(pl.col("layer") == layer)
            task_mean = at.filter(pl.col("variant") == "task")["value"].mean()
            found.setdefault(f"{task}/{metric}", {})[layer] = task_mean
            control = at.filter(pl.col("variant") == "control")["value"]
            if control.len():
                found.setdefault(f"{task}/selectivity", {})[layer] = task_mean - control.mean()
    return found


@pytest.fixture
def mlflow_store(tmp_path, monkeypatch):
    """A local MLflow file store under tmp_path (MLflow 3.7+ asks for the opt-in variable)."""
    pytest.importorskip("mlflow")
    uri = (tmp_path / "mlruns").as_uri()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "lingprobe-test")
    return uri


@pytest.mark.slow
def test_a_sweep_logged_to_mlflow_has_one_run_per_unit_with_its_scores(tmp_path, mlflow_store):
    from mlflow.tracking import MlflowClient

    text = sweep_toml(tmp_path / "out", models=("glove:6B.50d",))
    config = tmp_path / "sweep.toml"
    config.write_text(text.replace("[sweep]\n", '[sweep]\nlog_to = "mlflow"\n', 1))
    assert load_config(config).log_to == "mlflow"
    summary = run_sweep(config, progress=False)
    assert (summary.done, summary.failed) == (3, 0)

    client = MlflowClient(mlflow_store)
    experiment = client.get_experiment_by_name("lingprobe-test")
    runs = client.search_runs([experiment.experiment_id])
    results = pl.read_parquet(summary.out / "results.parquet")
    units = set(results["unit"].unique().to_list())
    assert sorted(r.info.run_name for r in runs) == sorted(units)  # one run per unit
    tracked = read_log(summary.out).filter(pl.col("event") == "tracked")
    assert set(tracked["tracker_run"]) == {r.info.run_id for r in runs}
    for run in runs:
        unit = run.info.run_name
        rows = results.filter(pl.col("unit") == unit)
        assert run.info.status == "FINISHED"
        assert run.data.tags["lingprobe.suite"] == rows["suite"][0]
        assert run.data.tags["lingprobe.model"] == "glove:6B.50d"
        assert run.data.params["model.name"] == "glove:6B.50d"
        assert run.data.params["suite"] == rows["suite"][0]
        expected = expected_scores(rows)
        assert set(run.data.metrics) == set(expected) and expected
        for key, by_layer in expected.items():
            history = client.get_metric_history(run.info.run_id, key)
            logged = {m.step: m.value for m in history}
            assert logged == pytest.approx(by_layer)
        files = {a.path for a in client.list_artifacts(run.info.run_id)}
        assert {"settings.json", "sweep", "rows", "unit"} <= files
        (rows_file,) = client.list_artifacts(run.info.run_id, "rows")
        assert rows_file.path == f"rows/{unit}.parquet"
        local = Path(client.download_artifacts(run.info.run_id, rows_file.path, str(tmp_path)))
        assert pl.read_parquet(local).equals(
            pl.read_parquet(Records(summary.out).result_path(unit))
        )

    again = run_sweep(config, progress=False)  # a rerun runs nothing and logs nothing more
    assert again.ran == 0
    assert len(client.search_runs([experiment.experiment_id])) == len(runs)


def wandb_records(path: Path) -> list:
    """The records of an offline W&B run file (a LevelDB-style log of protobuf records:
    32 KiB blocks, each record a crc32/length/type header and one chunk of its bytes)."""
    from wandb.proto import wandb_internal_pb2

    data, block, position = path.read_bytes(), 32768, 7  # after the ":W&B" file header
    assert data[:4] == b":W&B"
    chunks, pending = [], b""
    while position + 7 <= len(data):
        left = block - position % block
        if left < 7:
            position += left
            continue
        _, length, kind = struct.unpack("<IHB", data[position : position + 7])
        if (length, kind) == (0, 0):  # the padded end of a block
            position += left
            continue
        chunk = data[position + 7 : position + 7 + length]
        position += 7 + length
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):  # full, or the last part of a split record
            chunks.append(pending)
    records = []
    for chunk in chunks:
        record = wandb_internal_pb2.Record()
        record.ParseFromString(chunk)
        records.append(record)
    return records


@pytest.mark.slow
def test_run_logged_to_wandb_offline_writes_one_run_per_unit(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    import json

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wandb-dir"))
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_PROJECT", "lingprobe-test")
    (tmp_path / "wandb-dir").mkdir()
    out = tmp_path / "out"
    argv = [*EDGE_FLAGS, "--init", "pretrained,random", "--out", str(out), "--log-to", "wandb"]
    assert main(argv) == 0
    results = pl.read_parquet(out / "results.parquet")
    runs = sorted((tmp_path / "wandb-dir" / "wandb").glob("offline-run-*/run-*.wandb"))
    assert len(runs) == results["unit"].n_unique() == 2
    seen = set()
    for path in runs:
        records = wandb_records(path)
        (run,) = [r.run for r in records if r.WhichOneof("record_type") == "run"]
        config = {u.key: json.loads(u.value_json) for u in run.config.update}
        unit = config["unit"]
        seen.add(unit)
        assert run.display_name == unit and run.project == "lingprobe-test"
        assert config["suite"] == "edge" and config["model"]["name"] == "glove:6B.50d"
        logged: dict[str, dict[int, float]] = {}
        for record in records:
            if record.WhichOneof("record_type") == "history":
                item = {
                    "/".join(i.nested_key) or i.key: json.loads(i.value_json)
                    for i in record.history.item
                }
                for key, value in item.items():
                    if not key.startswith("_") and key != "layer":
                        logged.setdefault(key, {})[item["layer"]] = value
        expected = expected_scores(results.filter(pl.col("unit") == unit))
        assert set(logged) == set(expected)
        for key, by_layer in expected.items():
            assert logged[key] == pytest.approx(by_layer)
        (artifact,) = [r.artifact for r in records if r.WhichOneof("record_type") == "artifact"]
        paths = {entry.path for entry in artifact.manifest.contents}
        assert {"sweep/manifest.json", f"rows/{unit}.parquet", "unit/manifest.json"} <= paths
    assert seen == set(results["unit"].unique().to_list())


def test_a_missing_tracker_package_is_one_line_before_anything_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "mlflow", None)  # as if the extra were not installed
    out = tmp_path / "out"
    assert main([*EDGE_FLAGS, "--out", str(out), "--log-to", "mlflow"]) == 2
    err = capsys.readouterr().err.strip()
    fix = 'pip install "lingprobe[mlflow]"'
    assert err == f"lingprobe: error: --log-to mlflow: mlflow is not installed; {fix}"
    assert not out.exists()
    with pytest.raises(TrackerError, match=r"choose one of mlflow, wandb"):
        open_tracker("neptune", out)


def test_a_tracker_that_fails_is_a_warning_and_the_unit_stays_done(tmp_path, caplog):
    from suites.schema import RESULTS_SCHEMA
    from suites.sweep import plan_units
    from suites.sweep.units import UnitOutcome

    class Unreachable:
        name = "mlflow"

        def log_unit(self, log):
            raise ConnectionError("server gone")

    config = tmp_path / "sweep.toml"
    config.write_text(sweep_toml(tmp_path / "out", models=("glove:6B.50d",), edge=False))
    unit = plan_units(load_config(config))[0]
    records = Records(tmp_path / "out", tracker=Unreachable())
    outcome = UnitOutcome(unit.id, pl.DataFrame(schema=RESULTS_SCHEMA), 1.0, "here")
    with caplog.at_level("WARNING"):
        records.record(unit, outcome)
    assert records.is_done(unit.id)
    (event,) = read_log(tmp_path / "out").filter(pl.col("event") == "track-failed").to_dicts()
    assert (event["unit"], event["tracker"]) == (unit.id, "mlflow")
    assert event["message"] == "ConnectionError: server gone"
    assert f"unit {unit.id} was not logged to mlflow" in caplog.text
