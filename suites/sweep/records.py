"""The sweep's records in its output folder, written by the driver only (never by workers).

  results/<unit>.parquet          a finished unit's leaderboard rows; its presence = unit done
  failures/<unit>.json            a failed unit: model, suite, group, tasks, error type, message
  failures/<unit>.traceback.txt   its full traceback
  sweep-log.jsonl                 one JSON line per event (start, done, failed) of every run,
                                  and each unit's run in the tracker (`tracked`) where the
                                  sweep logs to one (`suites.trackers`)

Every file is written atomically (temporary file + rename), so a sweep killed at any moment
leaves either a whole record or none; a unit without a result file runs again on the next run,
and a unit that succeeds after failing loses its failure record.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from lingprobe.atomic import atomic_write_bytes
from suites.outputs import readable, write_table
from suites.sweep.tracking import unit_log
from suites.sweep.units import Unit, UnitOutcome
from suites.trackers.open import Tracker

RESULTS, FAILURES, LOG = "results", "failures", "sweep-log.jsonl"
log = logging.getLogger(__name__)


def now() -> str:
    """Local time, to the second, for records."""
    return time.strftime("%Y-%m-%dT%H:%M:%S")


class Records:
    """Reads and writes the per-unit records of one output folder."""

    def __init__(self, out: Path, run: str | None = None, tracker: Tracker | None = None) -> None:
        self.out = out
        self.run = run or f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        self.tracker = tracker  # each unit that ends is logged to it after its record

    def result_path(self, unit_id: str) -> Path:
        """Where a finished unit's rows are."""
        return self.out / RESULTS / f"{unit_id}.parquet"

    def failure_path(self, unit_id: str) -> Path:
        """Where a failed unit's record is."""
        return self.out / FAILURES / f"{unit_id}.json"

    def traceback_path(self, unit_id: str) -> Path:
        """Where a failed unit's traceback is."""
        return self.out / FAILURES / f"{unit_id}.traceback.txt"

    def is_done(self, unit_id: str) -> bool:
        """Whether the unit has finished (in this or an earlier run): its result file exists and
        reads back. A damaged one is removed (with a log line) so the unit runs again."""
        return readable(self.result_path(unit_id))

    def started(self, unit: Unit, executor: str) -> None:
        """Log that a unit was handed to a worker."""
        self.log({"event": "start", **_unit_fields(unit), "executor": executor})

    def record(self, unit: Unit, outcome: UnitOutcome) -> None:
        """Store a unit's result (or failure) and log it."""
        fields = {
            **_unit_fields(unit),
            "seconds": round(outcome.seconds, 3),
            "worker": outcome.worker,
            "loaded_model": outcome.loaded_model,
            "load_seconds": round(outcome.load_seconds, 3),
            "restarted": outcome.restarted,
        }
        if outcome.rows is not None and outcome.error is None:
            write_table(outcome.rows, self.result_path(unit.id))
            self.failure_path(unit.id).unlink(missing_ok=True)
            self.traceback_path(unit.id).unlink(missing_ok=True)
            self.log({"event": "done", **fields})
            self.track(unit, outcome)
            return
        error = outcome.error
        assert error is not None
        trace = self.traceback_path(unit.id)
        atomic_write_bytes(trace, error.traceback.encode())
        failure = {
            **fields,
            "tasks": list(unit.group.tasks),
            "error_type": error.type,
            "message": error.message,
            "traceback": str(trace.relative_to(self.out)),
            "time": now(),
        }
        atomic_write_bytes(self.failure_path(unit.id), json.dumps(failure, indent=2).encode())
        self.log({"event": "failed", **fields, "error_type": error.type})
        self.track(unit, outcome)

    def track(self, unit: Unit, outcome: UnitOutcome) -> None:
        """Log an ended unit to the tracker; a tracker that fails (network ...) is logged and
        warned about, never stops the sweep (the unit's records are already written)."""
        if self.tracker is None:
            return
        where = {**_unit_fields(unit), "tracker": self.tracker.name}
        try:
            run = self.tracker.log_unit(unit_log(self.out, unit, outcome))
        except Exception as error:
            message = f"{type(error).__name__}: {str(error).strip()[:500]}"
            self.log({"event": "track-failed", **where, "message": message})
            log.warning("unit %s was not logged to %s: %s", unit.id, self.tracker.name, message)
            return
        self.log({"event": "tracked", **where, "tracker_run": run})

    def log(self, event: dict[str, Any]) -> None:
        """Append one event line to the sweep log."""
        self.out.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"time": now(), "run": self.run, **event}) + "\n"
        with open(self.out / LOG, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()


def _unit_fields(unit: Unit) -> dict[str, Any]:
    return {
        "unit": unit.id,
        "model": unit.model.label,
        "suite": unit.suite,
        "group": unit.group.name,
    }


def read_log(out: Path) -> pl.DataFrame:
    """Every logged event of every run into `out` (empty when nothing ran)."""
    path = out / LOG
    lines = path.read_text(errors="replace").splitlines() if path.exists() else []
    events = []
    for line in lines:
        try:
            events.append(json.loads(line))
        except ValueError:
            continue  # a line cut by a crash; the records, not the log, say what is done
    return pl.DataFrame(events, infer_schema_length=None) if events else pl.DataFrame()


def read_results(out: Path, unit_ids: Sequence[str]) -> list[pl.DataFrame]:
    """The rows of every finished unit among `unit_ids`."""
    records = Records(out)
    return [pl.read_parquet(records.result_path(u)) for u in unit_ids if records.is_done(u)]


def read_failures(out: Path, unit_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The failure records of the units among `unit_ids` that failed and have not finished."""
    records = Records(out)
    found = []
    for unit in unit_ids:
        path = records.failure_path(unit)
        if path.exists() and not records.is_done(unit):
            found.append(json.loads(path.read_text()))
    return found
