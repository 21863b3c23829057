"""The extraction loop: validate, then compute or load each shard of pooled features.

With a store, it goes shard by shard (`shard_size` items, `internals.store_run`): each shard's
rows are loaded when the store holds them and computed (then saved) when it does not, the rows to
compute gathered over a window of shards of about 64 MiB of features and computed in one call. In
memory (`lazy=False`) the shards are copied into one tensor returned at the end; lazily
(`lazy=True`) nothing is kept past its window, and an index of the shards is written last and
returned as a `FeatureSet`, so memory holds one window's rows (and the batch being computed)
however many items there are.

It works on anything shaped like a subject (`FeatureSource`), so `internals.subject` imports it and
not the other way round.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Protocol

import torch
from jaxtyping import Float
from torch import Tensor

from internals import sites as site_rules
from internals.errors import OptionError
from internals.items import SpanItem, validate_items
from internals.progress import ProgressBar, ProgressCallback
from internals.reading import Reading
from internals.sites import HasSites, SiteSpec
from internals.store import fingerprint
from internals.store_run import Computes, StoreRun, window_shards
from lingprobe.feature_index import DTYPES, FeatureIndex
from lingprobe.feature_set import FeatureSet
from lingprobe.shards import shard_checksum


class FeatureSource(HasSites, Computes, Protocol):
    """What the loop needs of a subject: identity, width, and `compute`."""

    fingerprint: str


def extract_features(
    subject: FeatureSource,
    items: Sequence[SpanItem],
    sites: SiteSpec,
    *,
    reading: Reading,
    store: str | Path | None,
    store_dtype: torch.dtype | None,
    shard_size: int,
    progress: bool | ProgressCallback,
    lazy: bool = False,
) -> Float[Tensor, "item site dim"] | FeatureSet:
    """Features of `items` at `sites`; with a store, shard by shard, resuming what exists.

    `progress`: True for a bar over items (padding waste in its postfix), False for none, or a
    callback that receives a `ProgressStep` after each batch. `lazy` (needs `store`): return a
    `FeatureSet` over the store's shards instead of one tensor.
    """
    check_store_options(store, store_dtype, shard_size)
    check_lazy(lazy, store, store_dtype)
    width = validate_items(items)
    sites = site_rules.resolve(subject, sites)
    dim = site_rules.common_dim(subject, sites)  # once: it hashes every SAE site's weights
    bar: Any = (
        nullcontext(progress)
        if callable(progress)
        else ProgressBar(len(items), f"features {subject.name}", enabled=bool(progress))
    )
    with bar as report:
        if store is None:
            return subject.compute(items, sites, reading, report)
        run = StoreRun(
            subject, items, width, sites, reading, store, store_dtype, shard_size, dim=dim
        )
        run.report = report
        out = None if lazy else torch.empty(run.shape)
        checksums: list[list[str]] = [[] for _ in sites]
        for shard, have in run.shards(range(math.ceil(len(items) / shard_size)), keep=lazy):
            rows = run.rows(shard)
            for k, site in enumerate(sites):
                if out is None:
                    checksums[k].append(shard_checksum(have[site]))
                else:
                    out[rows, k] = have[site].float()
            del have  # a view of its whole window: dropped before the next window is computed
        if out is not None:
            return out
        return _feature_set(run, checksums)


def extract_shards(
    subject: FeatureSource,
    items: Sequence[SpanItem],
    sites: SiteSpec,
    shards: range,
    *,
    reading: Reading,
    store: str | Path,
    store_dtype: torch.dtype | None,
    shard_size: int,
    window_bytes: int | None = None,
) -> None:
    """Compute (or find verified) shards number `shards` of `items`' folder in `store`, keeping
    one window in memory: the part of `extract_features(..., lazy=True)` one worker does when the
    items are split by whole windows of shards across workers. The folder, keys and values are
    those one process writes; `extract_features` over all the items then finds every shard and
    indexes them. `window_bytes` (default `internals.store_run.WINDOW_BYTES`, which one process
    uses): the features computed in one call."""
    check_store_options(store, store_dtype, shard_size)
    check_lazy(True, store, store_dtype)
    width = validate_items(items)
    resolved = site_rules.resolve(subject, sites)
    run = StoreRun(
        subject, items, width, resolved, reading, store, store_dtype, shard_size, window_bytes
    )
    for _shard, have in run.shards(shards, keep=True):
        del have  # a view of its whole window: dropped before the next window is computed


def shards_per_window(
    subject: FeatureSource,
    items: Sequence[SpanItem],
    sites: SiteSpec,
    shard_size: int,
    window_bytes: int | None = None,
) -> int:
    """The shards one store extraction of `items` at `sites` computes per call (a window of
    `window_bytes`, default `internals.store_run.WINDOW_BYTES`): split an extraction across
    workers (`extract_shards`) by whole windows and each worker's values equal one process's."""
    chosen = site_rules.resolve(subject, sites)
    width = validate_items(items) * site_rules.common_dim(subject, chosen)
    return window_shards(shard_size, len(chosen), width, window_bytes)


def _feature_set(run: StoreRun, checksums: list[list[str]]) -> FeatureSet:
    """Index the store's shards of these sites (written last) and open them as a feature set."""
    names = tuple(site.name for site in run.sites)
    meta = {key: value for key, value in run.meta.items() if isinstance(value, str | int | float)}
    index = FeatureIndex(
        shape=run.shape,
        dtype=str(run.dtype).removeprefix("torch."),
        site_names=names,
        site_folders=names,
        shard_size=run.shard_size,
        owner=run.shelf.owner,
        checksums=tuple(tuple(row) for row in checksums),
        meta=meta,
    )
    path = run.shelf.folder / f"featureset-{fingerprint(list(names))}.json"
    index.save(path)
    return FeatureSet(path, index)


STORE_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def check_lazy(lazy: bool, store: str | Path | None, store_dtype: torch.dtype | None) -> None:
    """Refuse `lazy=True` without a store to hold the shards, or in a dtype a feature set lacks."""
    if lazy and store is None:
        raise OptionError(
            "lazy=True keeps the features on disk and needs store=DIR (a folder for the shards);"
            " give store=..., or lazy=False for one tensor in memory"
        )
    if lazy and store_dtype is not None and str(store_dtype).removeprefix("torch.") not in DTYPES:
        raise OptionError(
            f"lazy=True with store_dtype={store_dtype!r}: a feature set stores torch.float32,"
            " torch.float16 or torch.bfloat16; give one of them"
        )


def check_store_options(
    store: str | Path | None, store_dtype: torch.dtype | None, shard_size: int
) -> None:
    """Refuse store settings that would lose or garble features (`OptionError` naming the fix)."""
    if isinstance(shard_size, bool) or not isinstance(shard_size, int) or shard_size < 1:
        raise OptionError(
            f"shard_size={shard_size!r}: give a whole number of items per shard, at least 1"
            " (default 2048)"
        )
    if store_dtype is not None and store_dtype not in STORE_DTYPES:
        raise OptionError(
            f"store_dtype={store_dtype!r} would not keep features as real numbers (integers or"
            " bools round them away); give torch.float16, torch.bfloat16, torch.float32 or"
            " torch.float64, or None for float32"
        )
    if store is not None:
        if not isinstance(store, str | Path):
            raise OptionError(f"store={store!r}: give a folder path (str or pathlib.Path)")
        if Path(store).exists() and not Path(store).is_dir():
            raise OptionError(f"store={str(store)!r} is a file; give a folder for the store")
