"""Unit records: a failure is stored with its error and traceback, and cleared by a success."""

from __future__ import annotations

import json

import polars as pl

from suites.holmes.run import HolmesConfig
from suites.schema import RESULTS_SCHEMA, conform
from suites.suite import TaskGroup
from suites.sweep import read_log
from suites.sweep.config import ModelSpec
from suites.sweep.merge import write_merged
from suites.sweep.records import Records
from suites.sweep.units import Unit, UnitError, UnitOutcome
from suites.sweep.worker import label_rows

UNIT = Unit(
    "m__holmes__upos__0123456789",
    ModelSpec("m", "minilm"),
    "holmes",
    HolmesConfig(groups=(TaskGroup("upos", ("upos",)),)),
    TaskGroup("upos", ("upos",)),
)


def failed() -> UnitOutcome:
    try:
        raise KeyError("no such thing")
    except KeyError as error:
        return UnitOutcome(UNIT.id, None, 1.5, "host:1", True, 1.5, UnitError.of(error))


def test_failure_then_success(tmp_path):
    records = Records(tmp_path, run="first")
    records.started(UNIT, "local")
    records.record(UNIT, failed())
    assert not records.is_done(UNIT.id)
    stored = json.loads(records.failure_path(UNIT.id).read_text())
    assert (stored["error_type"], stored["message"], stored["tasks"]) == (
        "KeyError",
        "'no such thing'",
        ["upos"],
    )
    assert "raise KeyError" in (tmp_path / stored["traceback"]).read_text()
    _, board, failures = write_merged(tmp_path, [UNIT.id])
    assert board.height == 0 and failures["unit"].to_list() == [UNIT.id]
    assert json.loads((tmp_path / "failures.json").read_text())[0]["error_type"] == "KeyError"

    suite_rows = conform(
        pl.DataFrame({"seed": [0], "value": [0.5]}),
        model="sentence-transformers/all-MiniLM-L6-v2",
        init="pretrained",
        suite="",
        task="upos",
        phenomenon="",
        phenomenon_type="",
        site="encoder.6",
        layer=6,
        variant="task",
        mask=1.0,
        split="test",
        metric="macro_f1",
        unit="",
    )
    rows = label_rows(suite_rows, UNIT)
    assert rows.columns == list(RESULTS_SCHEMA)
    assert rows.select("unit", "suite", "model", "init").row(0) == (
        UNIT.id,
        "holmes",
        "m",
        "pretrained",
    )
    Records(tmp_path, run="second").record(UNIT, UnitOutcome(UNIT.id, rows, 2.0, "host:2"))
    assert records.is_done(UNIT.id) and not records.failure_path(UNIT.id).exists()
    assert not records.traceback_path(UNIT.id).exists()
    merged, board, failures = write_merged(tmp_path, [UNIT.id])
    assert merged.equals(rows) and failures.height == 0 and board["score"].to_list() == [0.5]
    log = read_log(tmp_path)
    assert log.select("run", "event").rows() == [
        ("first", "start"),
        ("first", "failed"),
        ("second", "done"),
    ]
