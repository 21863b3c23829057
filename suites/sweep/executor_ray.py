"""The Ray executor: each model's units go to a Ray worker (an actor) that loads the model once.

Scheduling: a worker per model (up to `workers_per_model` for models with many units), each
with the unit resource request (`num_cpus` = `[resources] cpus`, `num_gpus` = `gpus`, by
default 1 when the cluster has GPUs). A worker holds one unit at a time; when it ends, the
driver records the outcome and hands the worker the model's next unit, or retires it and
starts a worker for the next model. At most `max_workers` workers live at once (default: as
many as the cluster's CPUs and GPUs hold). A worker that dies (e.g. out of memory) fails its
unit; the model's other units go to a fresh worker. Workers write unit folders and the store
under the sweep's `out` (on a cluster: a filesystem every node sees); the driver alone writes
the records. Ray is an optional extra: `pip install 'lingprobe[ray]'`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from suites.sweep.config import ModelSpec, Resources
from suites.sweep.errors import SweepError
from suites.sweep.progress import SweepProgress
from suites.sweep.records import Records
from suites.sweep.units import Unit, UnitContext, UnitError, UnitOutcome
from suites.sweep.worker import ModelWorker


def import_ray() -> Any:
    """The `ray` module, or a clear error naming the extra to install."""
    try:
        import ray
    except ImportError as error:
        raise SweepError(
            "executor = 'ray' needs Ray: pip install 'lingprobe[ray]' (or ray>=2.9), or use"
            " executor = 'local'"
        ) from error
    return ray


def gpus_per_worker(resources: Resources, cluster: dict[str, float]) -> float:
    """`[resources] gpus`, or 1 when the cluster has a GPU and none was given."""
    if resources.gpus is not None:
        return resources.gpus
    return 1.0 if cluster.get("GPU", 0.0) >= 1 else 0.0


def capacity(resources: Resources, cluster: dict[str, float], gpus: float) -> int:
    """How many workers may live at once."""
    if resources.max_workers is not None:
        return resources.max_workers
    fits = int(cluster.get("CPU", 1.0) // resources.cpus)
    if gpus > 0:
        fits = min(fits, int(cluster.get("GPU", 0.0) // gpus))
    return max(1, fits)


@dataclass
class _Worker:
    model: ModelSpec
    actor: Any
    unit: Unit | None = None


def run_ray(
    groups: list[tuple[ModelSpec, list[Unit]]],
    context: UnitContext,
    records: Records,
    progress: SweepProgress,
    resources: Resources,
) -> None:
    """Run every unit on Ray workers; each outcome is recorded by this process as it ends."""
    ray = import_ray()
    started_ray = not ray.is_initialized()
    if started_ray:
        ray.init(address=resources.address, include_dashboard=False, log_to_driver=True)
    cluster = ray.cluster_resources()
    gpus = gpus_per_worker(resources, cluster)
    remote = ray.remote(ModelWorker).options(
        num_cpus=resources.cpus, num_gpus=gpus, max_restarts=0, max_task_retries=0
    )
    limit = capacity(resources, cluster, gpus)
    queues = {model: deque(units) for model, units in groups}
    live: dict[ModelSpec, int] = {model: 0 for model in queues}
    in_flight: dict[Any, _Worker] = {}

    def submit(worker: _Worker) -> None:
        unit = queues[worker.model].popleft()
        worker.unit = unit
        records.started(unit, "ray")
        progress.started(unit)
        in_flight[worker.actor.run.remote(unit)] = worker

    def retire(worker: _Worker) -> None:
        ray.kill(worker.actor)
        live[worker.model] -= 1

    def fill() -> None:
        for model, queue in queues.items():
            while (
                queue and sum(live.values()) < limit and live[model] < resources.workers_per_model
            ):
                live[model] += 1
                submit(_Worker(model, remote.remote(model, context)))

    try:
        fill()
        while in_flight:
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            worker = in_flight.pop(ready[0])
            unit = worker.unit
            assert unit is not None
            try:
                outcome, alive = ray.get(ready[0]), True
            except ray.exceptions.RayError as error:  # the worker process died
                outcome = UnitOutcome(unit.id, None, 0.0, "ray", error=UnitError.of(error))
                alive = False
            records.record(unit, outcome)
            progress.finished(unit, outcome)
            if alive and queues[worker.model]:
                submit(worker)
            else:
                retire(worker)
                fill()
    finally:
        for worker in in_flight.values():
            ray.kill(worker.actor)
        if started_ray:
            ray.shutdown()
