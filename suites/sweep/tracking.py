"""A sweep unit as an experiment tracker sees it (`suites.trackers.UnitLog`): its tags, the
settings that decide its numbers, its headline scores per layer and its files."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from suites.sweep.plan import unit_identity
from suites.sweep.units import UNITS, Unit, UnitOutcome
from suites.trackers.unit_log import UnitLog, layer_scores, report_files


def unit_files(out: Path, unit: Unit) -> tuple[tuple[Path, str], ...]:
    """(file, folder in the run): the sweep manifest (`sweep/`), the unit's rows (`rows/`) and
    its unit folder's report files (`unit/`: tables, plots, its manifest; no tensors)."""
    rows = out / "results" / f"{unit.id}.parquet"
    found = [(p, where) for p, where in ((out / "manifest.json", "sweep"), (rows, "rows"))]
    found = [(p, where) for p, where in found if p.is_file()]
    return tuple(found + report_files(out / UNITS / unit.id, "unit"))


def unit_log(out: Path, unit: Unit, outcome: UnitOutcome) -> UnitLog:
    """The `UnitLog` of a unit that ended (done or failed) in the sweep folder `out`."""
    error = None if outcome.error is None else f"{outcome.error.type}: {outcome.error.message}"
    tags = {
        "model": unit.model.label,
        "suite": unit.suite,
        "group": unit.group.name,
        "status": "done" if outcome.ok else "failed",
    }
    rows = outcome.rows if outcome.rows is not None else pl.DataFrame()
    return UnitLog(
        name=unit.id,
        sweep=out,
        tags=tags,
        settings=unit_identity(unit),
        scores=layer_scores(rows, unit.suite) if rows.height else (),
        files=unit_files(out, unit),
        error=error,
    )
