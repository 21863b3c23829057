"""`RayWorker`: the `ModelWorker` a Ray actor runs, and what a worker's death becomes.

The Ray executor starts each worker with `max_restarts = max_task_retries = [sweep] retries`,
so when a worker's process or its whole node dies, Ray starts the actor again (on any node with
room) and runs the unit it held once more. A restarted actor knows it was restarted
(`was_current_actor_reconstructed`); before its first unit it removes that unit's folder, so
the new attempt starts clean and nothing the dead process half-wrote is read back. The store
needs no cleaning: its shards are written atomically and verified on reading. The unit counts
only once the driver has written its result record (`suites.sweep.records`), which happens
after a whole outcome came back. When a worker has died more times than `retries`, its unit
fails with the cause Ray gives.
"""

from __future__ import annotations

import shutil
from dataclasses import replace

from suites.sweep.config import ModelSpec
from suites.sweep.units import Unit, UnitContext, UnitError, UnitOutcome
from suites.sweep.worker import ModelWorker


class RayWorker(ModelWorker):
    """A `ModelWorker` that cleans the unit folder of the unit it runs again after a restart."""

    def __init__(self, model: ModelSpec, context: UnitContext) -> None:
        import ray

        super().__init__(model, context)
        self.restarted = bool(ray.get_runtime_context().was_current_actor_reconstructed)
        self.first = True

    def run(self, unit: Unit) -> UnitOutcome:
        """Run one unit; the first unit after a restart starts from an empty unit folder."""
        retry = self.restarted and self.first
        self.first = False
        if retry:
            shutil.rmtree(self.context.folder(unit.id), ignore_errors=True)
        outcome = super().run(unit)
        return replace(outcome, restarted=True) if retry else outcome


def death_error(error: BaseException, retries: int) -> UnitError:
    """The error of a unit whose worker died `retries + 1` times: Ray's cause, one line first."""
    cause = UnitError.of(error)
    first = cause.message.strip().splitlines()[0] if cause.message.strip() else cause.type
    tries = "once" if retries == 0 else f"{retries + 1} times ([sweep] retries = {retries})"
    message = f"its Ray worker died {tries}; the last time: {first}"
    return UnitError(cause.type, message, cause.traceback)
