"""`extract_on_ray`: one model's features split across Ray workers by items, into one store.

The items are cut into runs of whole shards (`shard_size` items each), one run per worker. Each
worker (a Ray actor that loads the model once) extracts its run into the shared store, shard by
shard, as `subject.features(..., store=...)` does in one process: the same shards, computed in
the same batches, so the same numbers. One worker then opens the whole item list lazily: every
item's rows are already in the store under a worker's list (`internals.span_reuse`), so it
copies them, bit for bit, into the whole list's shards without a forward pass and writes the
`FeatureSet` index last. The result equals a single-process `features(..., lazy=True)` of the
same items. The store must be a folder every node sees (checked first, as for sweeps).

Node loss: each worker is an actor with `max_restarts` and `max_task_retries` = `retries`, so a
worker whose process or node dies is restarted and its run extracted again; the shards it had
finished are verified and kept, a half-written one never counts (shards are written atomically
and verified on reading).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from internals import SiteSpec, SpanItem
from lingprobe.feature_set import FeatureSet
from suites.sweep.config import ModelSpec
from suites.sweep.errors import SweepError
from suites.sweep.executor_ray import import_ray
from suites.sweep.shared_folders import check_shared_folders
from suites.sweep.worker import load_model, unit_threads


class Extractor:
    """A Ray actor's model: extracts runs of items into a store."""

    def __init__(self, model: ModelSpec, device: str | None, threads: int) -> None:
        self.model, self.device, self.threads = model, device, threads
        self.subject: Any = None

    def extract(
        self, items: Sequence[SpanItem], sites: SiteSpec | None, store: str, shard_size: int
    ) -> None:
        """Extract `items` into `store`, shard by shard (shards already there are kept), holding
        one shard at a time."""
        self._features(items, sites, store, shard_size, lazy=True)

    def assemble(
        self, items: Sequence[SpanItem], sites: SiteSpec | None, store: str, shard_size: int
    ) -> str:
        """The index path of the `FeatureSet` of `items` (their rows read from the store)."""
        found = self._features(items, sites, store, shard_size, lazy=True)
        return str(found.index_path)

    def _features(
        self,
        items: Sequence[SpanItem],
        sites: SiteSpec | None,
        store: str,
        shard_size: int,
        *,
        lazy: bool,
    ) -> Any:
        with unit_threads(self.threads):
            if self.subject is None:
                self.subject = load_model(self.model, self.device)
            return self.subject.features(
                items, sites, store=store, shard_size=shard_size, progress=False, lazy=lazy
            )


def runs(items: int, shard_size: int, workers: int) -> list[range]:
    """Contiguous runs of whole shards, one per worker (fewer when there are fewer shards)."""
    shards = math.ceil(items / shard_size)
    per = math.ceil(shards / max(1, min(workers, shards)))
    return [
        range(first * shard_size, min(items, (first + per) * shard_size))
        for first in range(0, shards, per)
    ]


def extract_on_ray(
    model: ModelSpec,
    items: Sequence[SpanItem],
    sites: SiteSpec | None,
    store: str | Path,
    *,
    workers: int = 2,
    shard_size: int = 2048,
    device: str | None = None,
    threads: int = 1,
    gpus: float = 0.0,
    retries: int = 2,
) -> FeatureSet:
    """`model`'s features of `items` at `sites`, extracted by `workers` Ray workers into
    `store` (a folder every node sees); equal to `subject.features(items, sites, store=store,
    shard_size=shard_size, lazy=True)` in one process. Uses the running Ray (or starts one)."""
    if workers < 1 or shard_size < 1 or not items:
        raise SweepError(
            f"extract_on_ray: workers={workers}, shard_size={shard_size}, {len(items)} items;"
            " give at least one worker, a positive shard size and at least one item"
        )
    ray = import_ray()
    started = not ray.is_initialized()
    if started:
        ray.init(include_dashboard=False)
    folder = Path(store)
    try:
        check_shared_folders(ray, {"store": folder}, float(threads), gpus)
        actor = ray.remote(Extractor).options(
            num_cpus=threads, num_gpus=gpus, max_restarts=retries, max_task_retries=retries
        )
        parts = runs(len(items), shard_size, workers)
        actors = [actor.remote(model, device, threads) for _ in parts]
        try:
            where = (sites, str(folder), shard_size)
            ray.get(
                [
                    each.extract.remote(list(items[run.start : run.stop]), *where)
                    for each, run in zip(actors, parts, strict=True)
                ]
            )
            index = ray.get(actors[0].assemble.remote(list(items), *where))
        except ray.exceptions.RayActorError as error:
            raise SweepError(
                f"extract_on_ray: a worker of {model.label} died {retries + 1} times (retries ="
                f" {retries}): {str(error).strip().splitlines()[0]}; the shards it finished are"
                " kept in the store, so running it again computes only the rest"
            ) from error
        finally:
            for each in actors:
                ray.kill(each)
    finally:
        if started:
            ray.shutdown()
    return FeatureSet.open(index)
