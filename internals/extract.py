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
    dim = site_rules.common_dim(subject, sites)
    bar: Any = (
        nullcontext(progress)
        if callable(progress)
        else ProgressBar(len(items), f"features {subject.name}", enabled=bool(progress))
    )
    with bar as report:
        if store is None:
            return subject.compute(items, sites, reading, report)
        dtype = store_dtype or torch.float32
        settings = {**reading.key(), "dtype": str(dtype)}
        data_key = data_fingerprint(items, settings)
        meta = {**subject.describe(), **settings, "items": len(items), "shard_size": shard_size}
        subject_key = subject.content_key()
        shelf = ActivationStore(store, subject_key, data_key, meta)
        segments = Segments.of(items, width)
        shelf.record_segments(segments)
        elsewhere: SpanIndex | None = None  # rows stored under other item lists, looked up once
        shape = (len(items), len(sites), width * dim)
        out = None if lazy else torch.empty(shape)
        checksums: list[list[str]] = [[] for _ in sites]
        for shard in range(math.ceil(len(items) / shard_size)):
            rows = slice(shard * shard_size, min(len(items), (shard + 1) * shard_size))
            chunk = items[rows]
            shard_shape = (len(chunk), width * dim)
            have = {site: shelf.load(site, shard, shard_shape, dtype) for site in sites}
            missing = [site for site, tensor in have.items() if tensor is None]
            if missing:
                elsewhere = elsewhere or SpanIndex.of(store, subject_key, settings)
                block = _missing_rows(
                    subject, chunk, missing, reading, report, dtype, elsewhere,
                    segments.of_items(rows), rows.start, shelf, shard, lazy, dim,
                )  # fmt: skip
                for k, site in enumerate(missing):
                    have[site] = block[:, k]
            else:
                report(ProgressStep(len(chunk)))
            for k, site in enumerate(sites):
                tensor = have[site]
                assert tensor is not None
                if out is None:
                    checksums[k].append(shard_checksum(tensor))
                else:
                    out[rows, k] = tensor.float()
        if out is not None:
            return out
        return _feature_set(shelf, shape, sites, dtype, shard_size, checksums, meta)


def _feature_set(
    shelf: ActivationStore,
    shape: tuple[int, int, int],
    sites: Sequence[Site],
    dtype: torch.dtype,
    shard_size: int,
    checksums: list[list[str]],
    meta: dict[str, Any],
) -> FeatureSet:
    """Index the store's shards of these sites (written last) and open them as a feature set."""
    names = tuple(site.name for site in sites)
    index = FeatureIndex(
        shape=shape,
        dtype=str(dtype).removeprefix("torch."),
        site_names=names,
        site_folders=names,
        shard_size=shard_size,
        owner=shelf.owner,
        checksums=tuple(tuple(row) for row in checksums),
        meta={key: value for key, value in meta.items() if isinstance(value, str | int | float)},
    )
    path = shelf.folder / f"featureset-{fingerprint(list(names))}.json"
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
    dim: int,
) -> Tensor:
    """One shard's rows at the `missing` sites, `[item, site, width * dim]` in `dtype`: the
    items whose every segment the store holds under another item list are read from there, the
    rest computed. The shard is saved unless every item was read from elsewhere (its rows stay
    where they are, found again next time) and `keep` is False (a feature set needs it here)."""
    block = torch.empty(len(chunk), len(missing), segments.width * dim, dtype=dtype)
    served = elsewhere.fill(segments, missing, block, dim)
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
