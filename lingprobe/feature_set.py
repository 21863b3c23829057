"""`FeatureSet`: features `[item, site, dim]` that live on disk, read lazily by sites and items.

A feature set is a folder of verified shards (`lingprobe.shards`) and an index
(`lingprobe.feature_index`). The layout is site-major: each site's items are cut into shards of
`shard_size` items, in a folder of their own, so reading a group of sites reads only those
sites' bytes, and reading a range of items reads only the shards that cover it. Every shard is
verified when it is read (its key, dtype, shape and checksum, and the checksum the index records
for it); a damaged one is refused with a `FeatureSetError` naming the file and the fix, never
served. Reads return float32 CPU tensors whatever the stored dtype.

`FeatureSet.write` stores features computed anywhere (numpy or torch chunks, a memory-mapped
`.npy`); `subject.features(items, sites, store=DIR, lazy=True)` returns one over the activation
store's shards; `FeatureSet.open` reopens either.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np
import torch
from jaxtyping import Float, Int
from torch import Tensor

from lingprobe.errors import FeatureSetError, FeatureSetIndexError
from lingprobe.feature_index import INDEX, REWRITE, FeatureIndex
from lingprobe.feature_writer import DEFAULT_SHARD_SIZE, write_feature_folder
from lingprobe.shards import ShardDamage, read_shard

Sites = Sequence[int | np.integer] | np.ndarray | Tensor
Items = slice | Sequence[int | np.integer] | np.ndarray | Tensor

__all__ = ["FeatureSet"]


class FeatureSet:
    """A lazy, verified `[item, site, dim]` view of features stored on disk.

    Examples:
        >>> import tempfile, torch
        >>> from lingprobe.feature_set import FeatureSet
        >>> values = torch.arange(24, dtype=torch.float32).reshape(4, 2, 3)
        >>> folder = tempfile.mkdtemp() + "/features"
        >>> fs = FeatureSet.write(folder, [values[:3], values[3:]], ["layer.0", "layer.1"])
        >>> fs.shape, len(fs), fs.site_names
        ((4, 2, 3), 4, ('layer.0', 'layer.1'))
        >>> torch.equal(fs[1:3, 1], values[1:3, 1])
        True
        >>> torch.equal(FeatureSet.open(folder).to_tensor(), values)
        True
    """

    def __init__(self, index_path: str | Path, index: FeatureIndex) -> None:
        """A view over the shards that `index` (saved at `index_path`) lists; use `open`."""
        self.index_path = Path(index_path)
        self.folder = self.index_path.parent
        self.index = index

    @classmethod
    def open(cls, path: str | Path) -> FeatureSet:
        """The feature set in folder `path` (its `featureset.json`), or at index file `path`.

        The index is verified now; each shard when it is read.
        """
        path = Path(path)
        index_path = path / INDEX if path.is_dir() else path
        return cls(index_path, FeatureIndex.load(index_path))

    @classmethod
    def write(
        cls,
        folder: str | Path,
        chunks: Iterable[np.ndarray | Tensor],
        site_names: Sequence[str],
        dtype: torch.dtype | None = None,
        shard_size: int = DEFAULT_SHARD_SIZE,
        *,
        overwrite: bool = False,
    ) -> FeatureSet:
        """Store `chunks` (`[item, site, dim]` blocks, any number of rows each) in `folder`.

        `dtype`: the stored dtype, float32, float16 or bfloat16 (default: the chunks' own when
        it is one of those, else float32). Values that are not finite, or that overflow the
        stored dtype, are refused. The folder appears complete or not at all: shards and index
        are written into a temporary folder beside it, which is renamed into place last. An
        existing non-empty `folder` is refused unless `overwrite=True`. Memory holds one chunk
        and one buffer of `shard_size` items.
        """
        target = Path(folder)
        index = write_feature_folder(target, chunks, site_names, dtype, shard_size, overwrite)
        return cls(target / INDEX, index)

    @property
    def shape(self) -> tuple[int, int, int]:
        """`(item, site, dim)`."""
        return self.index.shape

    @property
    def dtype(self) -> torch.dtype:
        """The stored dtype (reads return float32)."""
        return self.index.torch_dtype

    @property
    def site_names(self) -> tuple[str, ...]:
        """The name of each site, in site order."""
        return self.index.site_names

    @property
    def shard_size(self) -> int:
        """Items per shard (the last shard of each site may hold fewer)."""
        return self.index.shard_size

    @property
    def key(self) -> str:
        """The content key: equal for equal shape, dtype, sites, shard size and values."""
        return self.index.content_key

    @property
    def nbytes(self) -> int:
        """Bytes of the stored features (all sites, stored dtype)."""
        items, sites, dim = self.shape
        return items * sites * dim * self.dtype.itemsize

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return (
            f"FeatureSet({str(self.folder)!r}, shape={self.shape}, dtype={self.dtype},"
            f" sites={len(self.site_names)})"
        )

    def to_tensor(self) -> Float[Tensor, "item site dim"]:
        """Every feature, float32 on the CPU."""
        return self.read()

    def read(
        self,
        sites: Sites | None = None,
        items: Items | None = None,
        *,
        out: Float[Tensor, "item site dim"] | None = None,
    ) -> Float[Tensor, "item site dim"]:
        """Features of `items` (default all) at site numbers `sites` (default all), float32 on
        the CPU, in the order asked; only the shards that hold them are read and verified.

        `sites`: site numbers (a list, range, integer array or tensor; negative from the last).
        `items`: a slice, item numbers (negative from the last), or a boolean mask over items.
        `out`: a CPU tensor `[item, site, dim]` (float32 or the stored dtype, a view is fine) to
        read into and return: a caller that reuses one spares the fresh memory's page faults,
        which cost more than the read itself.
        """
        site_list = self._site_numbers(sites)
        rows = self._item_numbers(items)
        shape = (len(rows), len(site_list), self.shape[2])
        if out is None:
            out = torch.empty(shape, dtype=torch.float32)
        elif (
            tuple(out.shape) != shape
            or out.device.type != "cpu"
            or out.dtype
            not in (
                torch.float32,
                self.dtype,
            )
        ):
            raise FeatureSetIndexError(
                f"out is {out.dtype} {tuple(out.shape)} on {out.device}; give a CPU tensor of"
                f" shape {shape} in torch.float32 or {self.dtype}, or out=None"
            )
        if len(rows) == 0:
            return out
        shard_of = rows // self.shard_size
        for shard in np.unique(shard_of).tolist():
            where = np.nonzero(shard_of == shard)[0]
            local = rows[where] - shard * self.shard_size
            for k, site in enumerate(site_list):
                values = self._shard(site, shard)
                _copy_rows(out, k, where, local, values)
        return out

    def __getitem__(self, key: Any) -> Float[Tensor, "..."]:
        """numpy-like indexing `fs[items]` or `fs[items, sites]`: ints, slices, lists, index
        tensors. An int drops its axis as numpy does (`fs[:, 3]` is `[item, dim]`)."""
        items, sites = key if isinstance(key, tuple) and len(key) == 2 else (key, slice(None))
        if isinstance(key, tuple) and len(key) != 2:
            raise FeatureSetIndexError(
                f"index {key!r}: give fs[items] or fs[items, sites] (the dim axis is read whole;"
                " index the returned tensor for it)"
            )
        drop = [axis for axis, part in enumerate((items, sites)) if _is_int(part)]
        if _is_int(sites):
            chosen: Sites = [int(sites)]
        elif isinstance(sites, slice):
            chosen = list(range(self.shape[1]))[sites]
        else:
            chosen = sites
        values = self.read(chosen, [int(items)] if _is_int(items) else items)
        for axis in reversed(drop):
            values = values.squeeze(axis)
        return values

    def _site_numbers(self, sites: Sites | None) -> list[int]:
        count = self.shape[1]
        if sites is None:
            return list(range(count))
        if isinstance(sites, Tensor | np.ndarray):
            sites = sites.tolist()
        if isinstance(sites, str | bytes) or not all(_is_int(s) for s in sites):
            raise FeatureSetIndexError(
                f"sites={sites!r}: give site numbers (ints); the names are fs.site_names"
            )
        wrong = [int(s) for s in sites if not -count <= int(s) < count]
        if wrong:
            raise FeatureSetIndexError(
                f"sites {wrong} are outside the {count} sites of this feature set; give numbers"
                f" from 0 to {count - 1} (negative from the last)"
            )
        return [int(s) % count for s in sites]

    def _item_numbers(self, items: Items | None) -> Int[np.ndarray, " item"]:
        count = self.shape[0]
        if items is None:
            return np.arange(count)
        if isinstance(items, slice):
            return np.arange(count)[items]
        array = items.cpu().numpy() if isinstance(items, Tensor) else np.asarray(items)
        if array.dtype == np.bool_:
            if array.shape != (count,):
                raise FeatureSetIndexError(
                    f"a boolean item mask of shape {array.shape}; give one of shape ({count},)"
                )
            return np.nonzero(array)[0]
        if array.ndim != 1 or (array.size and not np.issubdtype(array.dtype, np.integer)):
            raise FeatureSetIndexError(
                f"items of dtype {array.dtype} and shape {array.shape}: give a slice, a list of"
                " item numbers, or a 1-d integer or boolean tensor"
            )
        array = array.astype(np.int64)
        outside = array[(array < -count) | (array >= count)]
        if outside.size:
            raise FeatureSetIndexError(
                f"item {int(outside[0])} is outside the {count} items of this feature set; give"
                f" numbers from 0 to {count - 1} (negative from the last)"
            )
        return array % count

    def _shard(self, site: int, shard: int) -> Tensor:
        index = self.index
        path = index.shard_path(self.folder, site, shard)
        shape = (len(index.rows(shard)), self.shape[2])
        try:
            return read_shard(
                path,
                index.shard_key(site, shard),
                shape,
                self.dtype,
                index.checksums[site][shard],
            )
        except ShardDamage as damage:
            raise FeatureSetError(
                f"{path} is damaged ({damage}): its features cannot be trusted; {REWRITE}"
            ) from None


def _is_int(value: object) -> TypeGuard[int | np.integer | Tensor]:
    """A single index: a Python or numpy integer or a 0-d integer tensor (not a bool)."""
    if isinstance(value, Tensor):
        return value.ndim == 0 and not value.dtype.is_floating_point and value.dtype != torch.bool
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _copy_rows(
    out: Float[Tensor, "item site dim"],
    k: int,
    where: Int[np.ndarray, " row"],
    local: Int[np.ndarray, " row"],
    values: Tensor,
) -> None:
    """`out[where, k] = values[local]` as float32, without an index copy for a plain range."""
    n = len(where)
    start, first = int(where[0]), int(local[0])
    if np.array_equal(where, np.arange(start, start + n)) and np.array_equal(
        local, np.arange(first, first + n)
    ):
        out[start : start + n, k].copy_(values[first : first + n])
    else:
        out[torch.from_numpy(where), k] = values[torch.from_numpy(local)].to(out.dtype)
