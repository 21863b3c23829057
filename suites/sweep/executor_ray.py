"""The Ray executor: each model's units go to a Ray worker (an actor) that loads the model once.

Scheduling: a worker per model (up to `workers_per_model` for models with many units), each
with the unit resource request (`num_cpus` = `[resources] cpus`, `num_gpus` = `gpus`, by
default 1 when the cluster has GPUs). A worker holds one unit at a time; when it ends, the
driver records the outcome and hands the worker the model's next unit, or retires it and
starts a worker for the next model. At most `max_workers` workers live at once (default: as
many as the cluster's CPUs and GPUs hold).

Node loss: a worker whose process or node dies is restarted by Ray (actor `max_restarts` and
`max_task_retries` = `[sweep] retries`, default 2) on any node with room, and its unit runs
again there from a clean unit folder (`suites.sweep.ray_worker`); Ray retries only such
system failures, as a unit's own exception comes back in its outcome. A worker that died more
than `retries` times fails its unit with Ray's cause; the model's other units go to a fresh
worker. A restarted worker waits until a node has room, so a cluster that lost nodes runs on
with fewer workers.

Shared folders: workers write unit folders under the sweep's `out` and features into the
store, and the driver alone writes the records, so on a cluster both folders must be on a
filesystem every node sees; `suites.sweep.shared_folders` checks that on every node before any
worker starts. Ray is an optional extra: `pip install 'lingprobe[ray]'`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from suites.sweep.config import ModelSpec, Resources
from suites.sweep.errors import SweepError
from suites.sweep.progress import SweepProgress
from suites.sweep.ray_worker import RayWorker, death_error
from suites.sweep.records import Records
from suites.sweep.shared_folders import check_shared_folders
from suites.sweep.units import Unit, UnitContext, UnitOutcome


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
    retries: int = 2,
    actor_class: type[RayWorker] = RayWorker,
) -> None:
    """Run every unit on Ray workers; each outcome is recorded by this process as it ends.

    `retries`: how often Ray restarts a worker whose process or node died (its unit then runs
    again); `actor_class`: what each worker runs (a `RayWorker`)."""
    ray = import_ray()
    started_ray = not ray.is_initialized()
    if started_ray:
        ray.init(address=resources.address, include_dashboard=False, log_to_driver=True)
    try:
        cluster = ray.cluster_resources()
        gpus = gpus_per_worker(resources, cluster)
        check_shared_folders(
            ray, {"out": context.out, "store": context.store}, float(resources.cpus), gpus
        )
        remote = ray.remote(actor_class).options(
            num_cpus=resources.cpus, num_gpus=gpus, max_restarts=retries, max_task_retries=retries
        )
        _schedule(ray, remote, groups, context, records, progress, resources, retries, cluster)
    finally:
        if started_ray:
            ray.shutdown()


def _schedule(
    ray: Any,
    remote: Any,
    groups: list[tuple[ModelSpec, list[Unit]]],
    context: UnitContext,
    records: Records,
    progress: SweepProgress,
    resources: Resources,
    retries: int,
    cluster: dict[str, float],
) -> None:
    """Hand every unit to a worker of its model and record each outcome as it ends."""
    limit = capacity(resources, cluster, gpus_per_worker(resources, cluster))
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
            except ray.exceptions.RayError as error:  # the worker died more than `retries` times
                outcome = UnitOutcome(unit.id, None, 0.0, "ray", error=death_error(error, retries))
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
