"""The extraction loop: validate, then compute or load each shard of pooled features.

With a store, it goes shard by shard (`shard_size` items): each shard's rows are loaded when the
store holds them and computed (then saved) when it does not. In memory (`lazy=False`) the shards
are copied into one tensor returned at the end; lazily (`lazy=True`) nothing is kept past its
shard, and an index of the shards is written last and returned as a `FeatureSet`, so memory holds
one shard's rows (and the batch being computed) however many items there are.

It works on anything shaped like a subject (`FeatureSource`), so `internals.subject` imports it and
not the other way round.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from jaxtyping import Float
from torch import Tensor

from internals import sites as site_rules
from internals.errors import ItemError, OptionError
from internals.items import SpanItem, validate_items
from internals.progress import ProgressBar, ProgressCallback, ProgressStep
from internals.reading import Reading
from internals.segments import Segments
from internals.sites import HasSites, Site, SiteSpec
from internals.span_reuse import SpanIndex
from internals.store import ActivationStore, data_fingerprint, fingerprint
from lingprobe.feature_index import DTYPES, FeatureIndex
from lingprobe.feature_set import FeatureSet
from lingprobe.shards import shard_checksum


class FeatureSource(HasSites, Protocol):
    """What the loop needs of a subject: identity, width, and `compute`."""

    name: str
    dim: int
    fingerprint: str

    def describe(self) -> dict[str, Any]:
        """Identity for the store's metadata."""
        ...

    def content_key(self) -> str:
        """The store's key for the subject as it is now."""
        ...

    def compute(
        self,
        items: Sequence[SpanItem],
        sites: Sequence[Site],
        reading: Reading,
        progress: ProgressCallback | None = None,
    ) -> Float[Tensor, "item site dim"]:
        """Pooled features of validated items at checked sites."""
        ...


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
    bar: Any = (
        nullcontext(progress)
        if callable(progress)
        else ProgressBar(len(items), f"features {subject.name}", enabled=bool(progress))
    )
    with bar as report:
        if store is None:
            return subject.compute(items, sites, reading, report)
        run = _StoreRun(subject, items, width, sites, reading, store, store_dtype, shard_size)
        run.report = report
        out = None if lazy else torch.empty(run.shape)
        checksums: list[list[str]] = [[] for _ in sites]
        for shard in range(math.ceil(len(items) / shard_size)):
            have = run.shard(shard, keep=lazy)
            rows = slice(shard * shard_size, min(len(items), (shard + 1) * shard_size))
            for k, site in enumerate(sites):
                if out is None:
                    checksums[k].append(shard_checksum(have[site]))
                else:
                    out[rows, k] = have[site].float()
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
) -> None:
    """Compute (or find verified) shards number `shards` of `items`' folder in `store`, keeping
    none in memory: the part of `extract_features(..., lazy=True)` one worker does when the items
    are split by shards across workers. The folder, keys and values are those one process
    writes; `extract_features` over all the items then finds every shard and indexes them."""
    check_store_options(store, store_dtype, shard_size)
    check_lazy(True, store, store_dtype)
    width = validate_items(items)
    resolved = site_rules.resolve(subject, sites)
    run = _StoreRun(subject, items, width, resolved, reading, store, store_dtype, shard_size)
    for shard in shards:
        run.shard(shard, keep=True)


class _StoreRun:
    """One item list's folder in the store: each shard's rows loaded when there and verified,
    else read from other lists' rows or computed, then saved."""

    def __init__(
        self,
        subject: FeatureSource,
        items: Sequence[SpanItem],
        width: int,
        sites: Sequence[Site],
        reading: Reading,
        store: str | Path,
        store_dtype: torch.dtype | None,
        shard_size: int,
    ) -> None:
        self.subject, self.items, self.sites, self.reading = subject, items, sites, reading
        self.store, self.shard_size = store, shard_size
        self.report: Any = lambda step: None  # progress: the caller's callback, or none
        self.dtype = store_dtype or torch.float32
        self.settings = {**reading.key(), "dtype": str(self.dtype)}
        data_key = data_fingerprint(items, self.settings)
        self.meta = {
            **subject.describe(), **self.settings, "items": len(items), "shard_size": shard_size
        }  # fmt: skip
        self.subject_key = subject.content_key()
        self.shelf = ActivationStore(store, self.subject_key, data_key, self.meta)
        self.segments = Segments.of(items, width)
        self.shelf.record_segments(self.segments)
        self.elsewhere: SpanIndex | None = None  # rows stored under other lists, looked up once
        self.width = width * subject.dim
        self.shape = (len(items), len(sites), self.width)

    def shard(self, shard: int, keep: bool) -> dict[Site, Tensor]:
        """Each site's rows of shard number `shard`, in the store's dtype (saved when computed;
        with `keep`, saved too when every row was read from another list)."""
        rows = slice(shard * self.shard_size, min(len(self.items), (shard + 1) * self.shard_size))
        chunk = self.items[rows]
        shard_shape = (len(chunk), self.width)
        have = {site: self.shelf.load(site, shard, shard_shape, self.dtype) for site in self.sites}
        missing = [site for site, tensor in have.items() if tensor is None]
        if missing:
            self.elsewhere = self.elsewhere or SpanIndex.of(
                self.store, self.subject_key, self.settings
            )
            block = _missing_rows(
                self.subject, chunk, missing, self.reading, self.report, self.dtype,
                self.elsewhere, self.segments.of_items(rows), rows.start, self.shelf, shard, keep,
            )  # fmt: skip
            for k, site in enumerate(missing):
                have[site] = block[:, k]
        else:
            self.report(ProgressStep(len(chunk)))
        return {site: tensor for site, tensor in have.items() if tensor is not None}


def _feature_set(run: _StoreRun, checksums: list[list[str]]) -> FeatureSet:
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


def _missing_rows(
    subject: FeatureSource,
    chunk: Sequence[SpanItem],
    missing: list[Site],
    reading: Reading,
    report: Any,
    dtype: torch.dtype,
    elsewhere: SpanIndex,
    segments: Segments,
    first: int,
    shelf: ActivationStore,
    shard: int,
    keep: bool,
) -> Tensor:
    """One shard's rows at the `missing` sites, `[item, site, width * dim]` in `dtype`: the
    items whose every segment the store holds under another item list are read from there, the
    rest computed. The shard is saved unless every item was read from elsewhere (its rows stay
    where they are, found again next time) and `keep` is False (a feature set needs it here)."""
    block = torch.empty(len(chunk), len(missing), segments.width * subject.dim, dtype=dtype)
    served = elsewhere.fill(segments, missing, block, subject.dim)
    todo = np.nonzero(~served)[0]
    if len(todo) < len(chunk):
        report(ProgressStep(len(chunk) - len(todo)))
    if len(todo) == 0:
        if keep:
            for k, site in enumerate(missing):
                shelf.save(site, shard, block[:, k])
        return block
    try:
        computed = subject.compute([chunk[i] for i in todo.tolist()], missing, reading, report)
    except ItemError as error:
        raise error.moved(lambda index: first + int(todo[index])) from None
    if len(todo) == len(chunk):
        block = computed.to(dtype)
    else:
        block[torch.from_numpy(todo)] = computed.to(dtype)
    for k, site in enumerate(missing):
        shelf.save(site, shard, block[:, k])
    return block


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
