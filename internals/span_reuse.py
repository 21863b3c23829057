"""Rows the activation store already holds under other item lists, found by (text, span).

Items that share a sentence share one forward pass within a call; across calls, tasks and runs,
the store shares them: every item list it holds records its segments (`internals.segments`), and
before running the model on a shard's items, extraction asks `SpanIndex.fill` for the rows of
segments stored under another list of the same subject, read with the same settings and kept in
the same dtype. An item is taken from there when every one of its segments is found, at every
site asked for, in shards that pass verification (a damaged one is deleted and its items are
computed); everything else is computed. A dependency-label task after a part-of-speech task on the
same treebank reads the words' rows and runs no forward pass at all.

The rows served are the stored ones, bit for bit; computed anew, in other batches, they could
differ by float rounding (about 1e-6), as features computed with another batch size do.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from internals.segments import Segments
from internals.sites import Site
from internals.store import SEGMENTS, ActivationStore

_LOCK = threading.Lock()
_INDEXES: dict[tuple[str, str], SpanIndex] = {}


@dataclass(frozen=True)
class _Source:
    """Another item list's folder: its name, items, shard size and segments per item."""

    name: str
    items: int
    shard_size: int
    width: int


class SpanIndex:
    """The recorded segments of one subject's item lists read with the same settings, sorted by
    lookup key (`Segments.keys`); refreshed with the lists stored since."""

    def __init__(self, root: Path, subject_key: str, settings: dict[str, Any]) -> None:
        self.root, self.subject_key, self.settings = root, subject_key, settings
        self.sources: list[_Source] = []
        self.seen: set[str] = set()
        self.keys = np.empty(0, dtype=np.uint64)
        self.source = np.empty(0, dtype=np.int64)  # per sorted entry: index into `sources`
        self.segment = np.empty(0, dtype=np.int64)  # its segment number in that list
        self.digests = np.empty((0, 16), dtype=np.uint8)
        self.spans = np.empty((0, 2), dtype=np.int64)

    @classmethod
    def of(cls, root: str | Path, subject_key: str, settings: dict[str, Any]) -> SpanIndex:
        """The process's index for this store, subject and settings, brought up to date."""
        name = (str(Path(root) / subject_key), json.dumps(settings, sort_keys=True, default=str))
        with _LOCK:
            index = _INDEXES.get(name)
            if index is None:
                index = _INDEXES[name] = cls(Path(root), subject_key, settings)
            index.refresh()
        return index

    def refresh(self) -> None:
        """Index the item lists stored since the last look (a list still without its segments
        record is looked at again next time)."""
        folder = self.root / self.subject_key
        if not folder.is_dir():
            return
        added: list[tuple[_Source, Segments]] = []
        with os.scandir(folder) as entries:
            names = sorted(e.name for e in entries if e.is_dir() and e.name not in self.seen)
        for name in names:
            found = self._read(name)
            if found is not None:
                added.append(found)
        if added:
            self._merge(added)

    def _read(self, name: str) -> tuple[_Source, Segments] | None:
        folder = self.root / self.subject_key / name
        try:
            meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # not written yet (or not a list's folder): looked at again later
        wanted = json.loads(json.dumps(self.settings, default=str))
        if any(meta.get(key) != value for key, value in wanted.items()):
            self.seen.add(name)  # read another way: never a source for these settings
            return None
        if not (folder / SEGMENTS).exists():
            return None
        segments = ActivationStore(self.root, self.subject_key, name).segments()
        if segments is None:
            return None
        self.seen.add(name)
        source = _Source(name, int(meta["items"]), int(meta["shard_size"]), segments.width)
        return source, segments

    def _merge(self, added: list[tuple[_Source, Segments]]) -> None:
        first = len(self.sources)
        self.sources += [source for source, _ in added]
        parts = [segments for _, segments in added]
        keys = np.concatenate([self.keys, *(s.keys() for s in parts)])
        source = np.concatenate(
            [self.source, *(np.full(len(s.spans), first + i) for i, s in enumerate(parts))]
        )
        segment = np.concatenate([self.segment, *(np.arange(len(s.spans)) for s in parts)])
        digests = np.concatenate([self.digests, *(s.digests for s in parts)])
        spans = np.concatenate([self.spans, *(s.spans for s in parts)])
        order = np.argsort(keys, kind="stable")
        self.keys, self.source, self.segment = keys[order], source[order], segment[order]
        self.digests, self.spans = digests[order], spans[order]

    def fill(
        self,
        wanted: Segments,
        sites: Sequence[Site],
        allocate: Callable[[int], Tensor],
        dim: int,
    ) -> tuple[np.ndarray, Tensor | None]:
        """Which items of `wanted` have every segment stored at every site, and their rows: row
        j of `allocate(n)` (`[n, site, width * dim]`, the store's dtype) is the j-th such item's
        (only the served items are held, not the shard). `None` where no item is served."""
        served = np.zeros(wanted.n_items, dtype=bool)
        if not len(self.keys):
            return served, None
        entry = self._choose(wanted, sites)
        served = np.asarray((entry >= 0).reshape(wanted.n_items, wanted.width).all(axis=1))
        if not served.any():
            return served, None
        found = served.copy()
        out = allocate(int(found.sum()))
        rank = np.cumsum(found) - 1  # an item's row in `out`
        at = np.nonzero(np.repeat(found, wanted.width))[0]  # the served items' segments
        chosen = entry[at]
        segment = self.segment[chosen]
        groups, item, width, shard_size = self._shards(chosen)
        for group in np.unique(groups).tolist():
            mine = groups == group
            rows = (
                *(rank[at[mine] // wanted.width], at[mine] % wanted.width),  # into `out`
                *(item[mine] % shard_size[mine], segment[mine] % width[mine]),  # from the shard
            )
            if not self._copy(group >> 32, group & 0xFFFFFFFF, sites, out, dim, rows):
                served[at[mine] // wanted.width] = False  # a damaged source: computed instead
        if not served.any():
            return served, None
        if not served[found].all():
            out = out[torch.from_numpy(served[found])]
        return served, out

    def _choose(self, wanted: Segments, sites: Sequence[Site]) -> np.ndarray:
        """Per wanted segment, the sorted entry holding it in a shard present at every site
        (-1 where none does); candidates with the same key are tried in turn."""
        keys = wanted.keys()
        lo = np.searchsorted(self.keys, keys, side="left")
        hi = np.searchsorted(self.keys, keys, side="right")
        entry = np.full(len(keys), -1, dtype=np.int64)
        pending, tries = np.nonzero(hi > lo)[0], 0
        present: dict[tuple[int, int], bool] = {}
        while len(pending):
            candidate = lo[pending] + tries
            same = (self.digests[candidate] == wanted.digests[pending]).all(axis=1)
            same &= (self.spans[candidate] == wanted.spans[pending]).all(axis=1)
            same &= self._present(candidate, sites, present)
            entry[pending[same]] = candidate[same]
            tries += 1
            pending = pending[~same & (lo[pending] + tries < hi[pending])]
        return entry

    def _present(
        self, candidate: np.ndarray, sites: Sequence[Site], known: dict[tuple[int, int], bool]
    ) -> np.ndarray:
        """Whether each candidate's shard exists at every site (file checks, memoised)."""
        unique, back = np.unique(self._shards(candidate)[0], return_inverse=True)
        found = np.zeros(len(unique), dtype=bool)
        for k, group in enumerate(unique.tolist()):
            where = (group >> 32, group & 0xFFFFFFFF)
            if where not in known:
                store = ActivationStore(self.root, self.subject_key, self.sources[where[0]].name)
                known[where] = all(store.path(s, where[1]).exists() for s in sites)
            found[k] = known[where]
        return found[back.reshape(-1)]

    def _shards(self, entries: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per sorted entry: its source shard as one number (`source << 32 | shard`), its item
        in the source list, and that list's segments per item and shard size."""
        source = self.source[entries]
        width = np.array([s.width for s in self.sources], dtype=np.int64)[source]
        shard_size = np.array([s.shard_size for s in self.sources], dtype=np.int64)[source]
        item = self.segment[entries] // width
        return source * (1 << 32) + item // shard_size, item, width, shard_size

    def _copy(
        self,
        source: int,
        shard: int,
        sites: Sequence[Site],
        out: Tensor,
        dim: int,
        rows: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    ) -> bool:
        """Copy rows of one source shard, site by site: (item, segment) of `out` from (row,
        segment) of the shard. False when the shard fails verification at some site."""
        src = self.sources[source]
        store = ActivationStore(self.root, self.subject_key, src.name)
        n_rows = min(src.shard_size, src.items - shard * src.shard_size)
        item, seg, row, src_seg = rows
        for k, site in enumerate(sites):
            tensor = store.load(site, shard, (n_rows, src.width * dim), out.dtype)
            if tensor is None:
                return False
            for j, i in {(int(a), int(b)) for a, b in zip(seg, src_seg)}:
                pick = (seg == j) & (src_seg == i)
                dest = torch.from_numpy(item[pick])
                out[dest, k, j * dim : (j + 1) * dim] = tensor[
                    torch.from_numpy(row[pick]), i * dim : (i + 1) * dim
                ]
        return True
