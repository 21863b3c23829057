"""The local executor: one process, models one after another, each model loaded once."""

from __future__ import annotations

from suites.sweep.config import ModelSpec
from suites.sweep.progress import SweepProgress
from suites.sweep.records import Records
from suites.sweep.units import Unit, UnitContext
from suites.sweep.worker import ModelWorker


def run_local(
    groups: list[tuple[ModelSpec, list[Unit]]],
    context: UnitContext,
    records: Records,
    progress: SweepProgress,
) -> None:
    """Run every unit in this process, model by model; each outcome is recorded as it ends."""
    for index, (model, units) in enumerate(groups):
        worker = ModelWorker(model, context)
        try:
            for unit in units:
                records.started(unit, "local")
                progress.started(unit)
                outcome = worker.run(unit)
                records.record(unit, outcome)
                progress.finished(unit, outcome)
        finally:
            worker.close(collect=index < len(groups) - 1)  # free it before the next model
