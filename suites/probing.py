"""One probing experiment: a subject's features on a task, one batched probe grid, tidy tables.

This is the suites' single path from (subject, task) to results: features come from
`internals` (cached in the activation store when `store` is given), probes from `probes`.
Features are extracted `FEATURE_CHUNK` items at a time into one preallocated tensor (in the
store's dtype, e.g. float16, which `fit_probes` widens per minibatch), with an optional
per-chunk reduction (e.g. averaging the two spans of a pair), so extraction never holds more
than one chunk's working copies beside the result.

With a store and a memory budget (`TrainConfig.memory`, `--memory`), nothing is materialised:
the features are extracted lazily into the store (`subject.features(..., lazy=True)`, one shard
at a time), a per-chunk reduction is streamed into a derived `FeatureSet` beside the shards, and
`fit_probes` reads the `FeatureSet` by groups of sites that fit the budget (`task_feature_set`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import polars as pl
import torch
from torch import Tensor

from internals import FeatureSet, FeatureSetError, ProgressBar, Site, Subject, fingerprint
from internals import sites as site_rules
from lingprobe.heap import release_memory
from probes import ProbeGrid, ProbeResults, TrainConfig, fit_probes
from suites.schema import conform, score_table, site_columns
from suites.tasks import Task

# Items per extraction call: a multiple of the store's shard size (2048), so the shards a chunked
# extraction writes hold the same items as an unchunked one. Memory, not results.
FEATURE_CHUNK = 4096


@dataclass(frozen=True)
class ProbeRun:
    """Results of one (subject, task) experiment with the names needed to read them."""

    model: str
    init: str
    task: Task
    sites: tuple[Site, ...]
    results: ProbeResults

    def rows(self, suite: str = "", unit: str = "") -> pl.DataFrame:
        """Every probe's metrics in `suites.schema.RESULTS_SCHEMA` (sites by name)."""
        layers = site_columns(self.sites).drop("site")  # sites named as `fit_probes` was told
        frame = self.results.table().join(layers, on="site_index")
        frame = frame.drop("site_index", "best_epoch", "mask_kind")
        return conform(
            frame,
            model=self.model,
            init=self.init,
            suite=suite,
            task=self.task.name,
            phenomenon=self.task.phenomenon,
            phenomenon_type=self.task.phenomenon_type,
            unit=unit,
        )

    def summary(self) -> pl.DataFrame:
        """Scores per site, mask, split and metric: mean, sigma, control and selectivity."""
        return score_table(self.rows())


def task_features(
    subject: Subject,
    task: Task,
    sites: Sequence[Site] | None = None,
    *,
    pool: str = "mean",
    store: str | Path | None = None,
    store_dtype: torch.dtype | None = None,
    reduce: Callable[[Tensor], Tensor] | None = None,
    progress: bool = True,
) -> Tensor:
    """`subject.features` of the task's items (every layer unless `sites` is given), kept in
    `store_dtype` (default float32); `reduce` maps each chunk `[item, site, width]` to the
    features kept (e.g. the mean of a pair's two spans)."""
    chosen = list(sites) if sites is not None else site_rules.every_layer(subject)
    items = task.items()
    out: Tensor | None = None
    # one bar over the task's items, fed by every chunk (not one bar per chunk)
    with ProgressBar(len(items), f"features {subject.name}", enabled=progress) as bar:
        for start in range(0, len(items), FEATURE_CHUNK):
            chunk = subject.features(  # type: ignore[call-overload]
                items[start : start + FEATURE_CHUNK],  # type: ignore[arg-type]
                chosen,
                pool=pool,  # type: ignore[arg-type]
                store=store,
                store_dtype=store_dtype,
                progress=bar,  # a disabled bar ignores the steps
            )
            if reduce is not None:
                chunk = reduce(chunk)
            if out is None:
                dtype = store_dtype or chunk.dtype
                out = torch.empty(len(items), *chunk.shape[1:], dtype=dtype)
            out[start : start + chunk.shape[0]] = chunk
            del chunk
            release_memory(young_only=True)
    assert out is not None, "a task has at least one item"
    return out


def task_feature_set(
    subject: Subject,
    task: Task,
    sites: Sequence[Site] | None = None,
    *,
    store: str | Path,
    pool: str = "mean",
    store_dtype: torch.dtype | None = None,
    reduce: Callable[[Tensor], Tensor] | None = None,
    memory: int | None = None,
    progress: bool = True,
) -> FeatureSet:
    """`task_features` on disk: the task's items extracted lazily into `store` (one shard held
    at a time) and returned as a `FeatureSet`, never one `[item, site, dim]` tensor. With
    `reduce`, its output is streamed chunk by chunk into a derived feature set in
    `store/derived/` named by the extracted features' content key and the reduction (reused when
    it is there and verifies), so memory holds one chunk of at most `FEATURE_CHUNK` items, fewer
    where `memory` (bytes) asks: a chunk read in float32 and its reduction fit it."""
    chosen = list(sites) if sites is not None else site_rules.every_layer(subject)
    extracted: FeatureSet = subject.features(  # type: ignore[call-overload]
        task.items(),
        chosen,
        pool=pool,  # type: ignore[arg-type]
        store=store,
        store_dtype=store_dtype,
        progress=progress,
        lazy=True,
    )
    if reduce is None:
        return extracted
    return derived_feature_set(extracted, store, reduction_name(reduce), reduce, memory=memory)


def derived_feature_set(
    source: FeatureSet,
    store: str | Path,
    name: str,
    transform: Callable[[Tensor], Tensor],
    *,
    items: Tensor | None = None,
    memory: int | None = None,
    dtype: torch.dtype | None = None,
) -> FeatureSet:
    """`transform` of `source`'s `items` (item numbers; default every item), streamed chunk by
    chunk into a feature set in `store/derived/` named by `source`'s content key and `name`
    (which must say everything `transform` and `items` depend on), reused when it is there and
    verifies. A chunk holds at most `FEATURE_CHUNK` items, fewer where `memory` (bytes) asks: a
    chunk read in float32 and its transform fit it. Stored in `dtype` (default `source`'s)."""
    folder = Path(store) / "derived" / fingerprint([source.key, name])
    try:
        return FeatureSet.open(folder)
    except FeatureSetError:
        pass  # absent, or not complete: written (again) below

    _, n_sites, width = source.shape
    rows = FEATURE_CHUNK if memory is None else memory // (2 * n_sites * width * 4)
    rows = max(1, min(FEATURE_CHUNK, rows))
    total = len(source) if items is None else len(items)

    def chunks() -> Iterator[Tensor]:
        for start in range(0, total, rows):
            part = slice(start, start + rows)
            yield transform(source.read(items=part if items is None else items[part]))

    return FeatureSet.write(
        folder, chunks(), source.site_names, dtype=dtype or source.dtype, overwrite=True
    )


def reduction_name(reduce: Callable[[Tensor], Tensor]) -> str:
    """A stable name for a per-chunk reduction (a function, or a `functools.partial` of one
    with its arguments), for the key of the feature set it derives."""
    if isinstance(reduce, partial):
        arguments = [repr(a) for a in reduce.args]
        arguments += [f"{k}={v!r}" for k, v in sorted(reduce.keywords.items())]
        return f"{reduction_name(reduce.func)}({', '.join(arguments)})"
    return f"{getattr(reduce, '__module__', '')}.{getattr(reduce, '__qualname__', repr(reduce))}"


def probe_task(
    subject: Subject,
    task: Task,
    sites: Sequence[Site] | None = None,
    *,
    grid: ProbeGrid | None = None,
    config: TrainConfig | None = None,
    pool: str = "mean",
    store: str | Path | None = None,
    store_dtype: torch.dtype | None = None,
    features: Tensor | FeatureSet | None = None,
    device: str | torch.device | None = None,
    progress: bool = True,
) -> ProbeRun:
    """Extract (or take) features and train the whole probe grid on them in one optimisation.

    With a `store` and `config.memory`, the features stay on disk (`task_feature_set`) and the
    grid reads them by groups of sites within the budget; the results equal the in-memory fit."""
    chosen = tuple(sites) if sites is not None else tuple(site_rules.every_layer(subject))
    config = config or TrainConfig()
    feats: Tensor | FeatureSet
    if features is not None:
        feats = features
    elif store is not None and config.memory is not None:
        feats = task_feature_set(
            subject, task, chosen, store=store, pool=pool, store_dtype=store_dtype,
            progress=progress,
        )  # fmt: skip
    else:
        feats = task_features(
            subject,
            task,
            chosen,
            pool=pool,
            store=store,
            store_dtype=store_dtype,
            progress=progress,
        )
    results = fit_probes(
        feats,
        task.targets,
        task.splits,
        grid or ProbeGrid(),
        config,
        keys=task.keys,
        num_classes=task.num_classes if task.target_type == "classification" else None,
        device=device,
        progress=progress,
        site_names=[s.name for s in chosen],
    )
    return ProbeRun(subject.name, subject.init, task, chosen, results)
