"""`extract_on_ray`: one model's features split across Ray workers by items, into one store.

The items are cut into runs of whole windows of shards (`shard_size` items each; a window is
the shards one process computes in one call, `internals.store_run`), one run per worker. Each
worker (a Ray actor that loads the model once) computes its run's shards straight into the store
folder of the whole item list (`internals.extract_shards`): the folder, shard keys and
values a single-process `features(..., store=..., lazy=True)` of all the items writes, computed
in the same batches, so the same numbers. Every feature is written once. One worker then opens
the whole list lazily: it finds every shard there, verifies it and writes the `FeatureSet` index
last, with no forward pass. The store must be a folder every node sees (checked first, as for
sweeps).

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

from internals import Reading, SiteSpec, SpanItem, extract_shards, shards_per_window
from internals import sites as site_rules
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
        self,
        items: Sequence[SpanItem],
        shards: range,
        sites: SiteSpec | None,
        store: str,
        shard_size: int,
        window_bytes: int | None,
    ) -> None:
        """Compute shards number `shards` of `items` into `store` (shards already there and
        sound are kept), holding one window of shards at a time."""
        subject = self._subject()
        with unit_threads(self.threads):
            extract_shards(
                subject,
                items,
                sites if sites is not None else site_rules.every_layer(subject),
                shards,
                reading=Reading("mean", "window", None),
                store=store,
                store_dtype=None,
                shard_size=shard_size,
                window_bytes=window_bytes,
            )

    def assemble(
        self, items: Sequence[SpanItem], sites: SiteSpec | None, store: str, shard_size: int
    ) -> str:
        """The index path of the `FeatureSet` of `items` (every shard found in the store)."""
        subject = self._subject()
        with unit_threads(self.threads):
            found = subject.features(
                items, sites, store=store, shard_size=shard_size, progress=False, lazy=True
            )
        return str(found.index_path)

    def window(
        self,
        items: Sequence[SpanItem],
        sites: SiteSpec | None,
        shard_size: int,
        window_bytes: int | None,
    ) -> int:
        """Shards per window of computation (`internals.shards_per_window`)."""
        subject = self._subject()
        chosen = sites if sites is not None else site_rules.every_layer(subject)
        return shards_per_window(subject, items, chosen, shard_size, window_bytes)

    def _subject(self) -> Any:
        if self.subject is None:
            with unit_threads(self.threads):
                self.subject = load_model(self.model, self.device)
        return self.subject


def runs(items: int, shard_size: int, workers: int, window: int = 1) -> list[range]:
    """Contiguous runs of whole windows of `window` shards, one per worker (fewer when there
    are fewer windows): a window's rows are computed together wherever it runs."""
    windows = math.ceil(items / (shard_size * window))
    per = math.ceil(windows / max(1, min(workers, windows))) * window * shard_size
    return [range(first, min(items, first + per)) for first in range(0, items, per)]


def shard_run(run: range, shard_size: int) -> tuple[int, int]:
    """The shard numbers (first, stop) of a run of whole shards of items."""
    return run.start // shard_size, math.ceil(run.stop / shard_size)


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
    window_bytes: int | None = None,
) -> FeatureSet:
    """`model`'s features of `items` at `sites`, extracted by `workers` Ray workers into
    `store` (a folder every node sees); equal to `subject.features(items, sites, store=store,
    shard_size=shard_size, lazy=True)` in one process. Uses the running Ray (or starts one).

    The items are split by whole windows of computation (about `window_bytes` of features,
    default `internals.store_run.WINDOW_BYTES`, the size one process uses; another size splits
    finer but computes other batches, equal to one process only within float rounding)."""
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
        actors = [actor.remote(model, device, threads) for _ in range(workers)]
        try:
            where = (sites, str(folder), shard_size)
            every = ray.put(list(items))  # each worker needs the whole list: its folder's key
            window = ray.get(actors[0].window.remote(every, sites, shard_size, window_bytes))
            parts = runs(len(items), shard_size, workers, window)
            pending = {
                each.extract.remote(
                    every, range(*shard_run(run, shard_size)), *where, window_bytes
                ): each
                for each, run in zip(actors[: len(parts)], parts, strict=True)
            }
            for idle in actors[len(parts) :]:
                ray.kill(idle)
            last = actors[0]
            while pending:
                (finished,), _ = ray.wait(list(pending), num_returns=1)
                ray.get(finished)
                last = pending.pop(finished)
                if pending:  # its resources go to a worker Ray restarts after a node loss
                    ray.kill(last)
            index = ray.get(last.assemble.remote(every, *where))
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
