"""Filling one item list's folder of the activation store, a window of shards at a time.

Each shard's rows are loaded when the store holds them (verified), read from other item lists'
rows when every segment is stored there (`internals.span_reuse`), and computed otherwise, then
saved shard by shard. The rows to compute are gathered over a window of consecutive shards (about
`WINDOW_BYTES` of features) and computed in one call, so the model's batches are cut by length
over the whole window, not within each shard: a shard boundary no longer splits a batch nor
forces a second forward pass of a sentence whose words fall on both sides. Memory holds one
window's features and the batch being computed, however many items there are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch
from jaxtyping import Float
from torch import Tensor

from internals.errors import ItemError
from internals.items import SpanItem
from internals.progress import ProgressCallback, ProgressStep
from internals.reading import Reading
from internals.segments import Segments
from internals.sites import Site, common_dim
from internals.span_reuse import SpanIndex
from internals.store import ActivationStore, data_fingerprint
from lingprobe.heap import mapped_allocations, release_memory

WINDOW_BYTES = 1 << 26  # features of the shards computed in one call (memory, not results)


def window_shards(shard_size: int, sites: int, width: int, window_bytes: int | None = None) -> int:
    """Shards per window: window number k holds shards k * n to (k + 1) * n - 1, so the rows
    computed together (and their float rounding) do not depend on which shards a call asks
    for; a run of whole windows computed elsewhere equals the same run computed here."""
    limit = WINDOW_BYTES if window_bytes is None else window_bytes
    return max(1, limit // (shard_size * sites * width * 4))


@runtime_checkable
class Computes(Protocol):
    """What filling the store needs of a subject (`internals.extract.FeatureSource`)."""

    name: str
    dim: int

    def describe(self) -> dict[str, Any]:
        """Identity for the store's metadata."""
        ...

    def site_dim(self, site: Site) -> int:
        """Width of one segment's features at `site`."""
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


class StoreRun:
    """One item list's folder in the store, filled shard by shard (`shards`)."""

    def __init__(
        self,
        subject: Computes,
        items: Sequence[SpanItem],
        width: int,
        sites: Sequence[Site],
        reading: Reading,
        store: str | Path,
        store_dtype: torch.dtype | None,
        shard_size: int,
        window_bytes: int | None = None,
        *,
        dim: int | None = None,
    ) -> None:
        """Open (and create) the folder of `items` read with `reading`; `width`: the items'
        segments each (`validate_items`); `window_bytes`: default `WINDOW_BYTES`; `dim`: the
        sites' `common_dim` when the caller has it (else computed here, hashing every SAE)."""
        self.window_bytes = WINDOW_BYTES if window_bytes is None else window_bytes
        self.subject, self.items, self.sites, self.reading = subject, items, sites, reading
        self.store, self.shard_size = store, shard_size
        self.report: Callable[[ProgressStep], Any] = lambda step: None  # the caller's progress
        self.dtype = store_dtype or torch.float32
        self.settings = {**reading.key(), "dtype": str(self.dtype)}
        self.meta = {
            **subject.describe(), **self.settings, "items": len(items), "shard_size": shard_size
        }  # fmt: skip
        self.subject_key = subject.content_key()
        data_key = data_fingerprint(items, self.settings)
        self.shelf = ActivationStore(store, self.subject_key, data_key, self.meta)
        self.segments = Segments.of(items, width)
        self.shelf.record_segments(self.segments)
        self.elsewhere: SpanIndex | None = None  # rows stored under other lists, looked up once
        # a head's or an SAE's width at those sites; `common_dim` hashes the SAEs, so only once
        self.dim = common_dim(subject, sites) if dim is None else dim
        self.width = width * self.dim
        self.shape = (len(items), len(sites), self.width)

    def rows(self, shard: int) -> slice:
        """The items of shard number `shard`."""
        return slice(shard * self.shard_size, min(len(self.items), (shard + 1) * self.shard_size))

    def shards(self, numbers: range, keep: bool) -> Iterator[tuple[int, dict[Site, Tensor]]]:
        """`(shard, rows of each site)` for every shard of `numbers`, in order, in the store's
        dtype; what is computed is saved (with `keep`, also a shard whose every row was read
        from another list: a feature set needs it here). A shard's rows are views of its whole
        window: drop them before asking for the next shard, or two windows are held."""
        per_window = window_shards(self.shard_size, len(self.sites), self.width, self.window_bytes)
        start = numbers.start
        with mapped_allocations():  # a batch's tensors leave no resident gaps in the heap
            while start < numbers.stop:  # windows start at multiples of `per_window` shards
                stop = min(numbers.stop, (start // per_window + 1) * per_window)
                yield from self._window(range(start, stop), keep)
                release_memory(young_only=True)  # the window's working copies, before the next
                start = stop

    def _window(self, numbers: range, keep: bool) -> Iterator[tuple[int, dict[Site, Tensor]]]:
        have: dict[int, dict[Site, Tensor | None]] = {}
        pending: dict[int, _Pending] = {}
        for shard in numbers:
            rows = self.rows(shard)
            shape = (rows.stop - rows.start, self.width)
            have[shard] = {s: self.shelf.load(s, shard, shape, self.dtype) for s in self.sites}
            missing = [site for site, tensor in have[shard].items() if tensor is None]
            if missing:
                pending[shard] = self._from_elsewhere(shard, missing)
            else:
                self.report(ProgressStep(shape[0]))
        for group in _by_sites(list(pending.values())):
            self._compute(group)
        for shard in numbers:  # a shard mixing served and computed rows is put together alone
            mine = have.pop(shard)
            part = pending.pop(shard, None)
            if part is not None:
                block = part.rows()
                if len(part.todo) or keep:
                    for k, site in enumerate(part.missing):
                        self.shelf.save(site, shard, block[:, k])
                for k, site in enumerate(part.missing):
                    mine[site] = block[:, k]
                del part, block
            yield shard, {site: t for site, t in mine.items() if t is not None}

    def _from_elsewhere(self, shard: int, missing: list[Site]) -> _Pending:
        """The shard's rows at `missing` sites that other lists hold; which are left to do."""
        rows = self.rows(shard)
        if self.elsewhere is None:
            self.elsewhere = SpanIndex.of(self.store, self.subject_key, self.settings)
        n_rows = rows.stop - rows.start
        served, found = self.elsewhere.fill(
            self.segments.of_items(rows),
            missing,
            lambda n: torch.empty(n, len(missing), self.width, dtype=self.dtype),
            self.dim,
        )
        todo = np.nonzero(~served)[0]
        if len(todo) < n_rows:
            self.report(ProgressStep(n_rows - len(todo)))
        return _Pending(shard, missing, rows.start, n_rows, served, found, todo)

    def _compute(self, group: list[_Pending]) -> None:
        """Compute the rows left to do of shards needing the same sites, in one call."""
        origin = np.concatenate([part.first + part.todo for part in group])
        if not len(origin):
            return
        chunk = [self.items[i] for i in origin.tolist()]
        try:
            computed = self.subject.compute(chunk, group[0].missing, self.reading, self.report)
        except ItemError as error:
            raise error.moved(lambda index: int(origin[index])) from None
        start = 0
        for part in group:
            part.computed = computed[start : start + len(part.todo)].to(self.dtype)
            start += len(part.todo)


class _Pending:
    """A shard with sites to fill: the rows served from other lists (`found`, in item order),
    the items still to compute (`todo`) and, once computed, theirs (`computed`)."""

    def __init__(
        self,
        shard: int,
        missing: list[Site],
        first: int,
        n_rows: int,
        served: np.ndarray,
        found: Tensor | None,
        todo: np.ndarray,
    ) -> None:
        self.shard, self.missing, self.first, self.n_rows = shard, missing, first, n_rows
        self.served, self.found, self.todo = served, found, todo
        self.computed: Tensor | None = None

    def rows(self) -> Float[Tensor, "item site dim"]:
        """The shard's rows: the computed ones as they are (a view of the window's) or the
        served ones alone, else both put together in a new block of the shard."""
        if self.found is None or not len(self.todo):
            whole = self.computed if self.found is None else self.found
            assert whole is not None  # computed before the rows are asked for
            return whole
        assert self.computed is not None
        block = torch.empty(self.n_rows, *self.found.shape[1:], dtype=self.found.dtype)
        block[torch.from_numpy(np.nonzero(self.served)[0])] = self.found
        block[torch.from_numpy(self.todo)] = self.computed
        return block


def _by_sites(pending: list[_Pending]) -> list[list[_Pending]]:
    """The pending shards grouped by the sites they miss (first-seen order)."""
    groups: dict[tuple[str, ...], list[_Pending]] = {}
    for part in pending:
        groups.setdefault(tuple(site.name for site in part.missing), []).append(part)
    return list(groups.values())
