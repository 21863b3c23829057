"""Writing a feature set from chunks: one shard buffer, then a folder renamed into place.

Chunks `[item, site, dim]` of any row count (numpy arrays, memory-mapped ones included, or torch
tensors) are copied into a buffer of `shard_size` items in the stored dtype; each time it fills,
every site's shard is written. Memory holds one chunk (as the caller gives it) and the buffer.
Everything goes into a hidden temporary folder beside the target, the index last, and the folder
is renamed into place: a crash mid-write leaves no folder that `FeatureSet.open` accepts, and the
next write to the same target removes the dead writer's temporary folder.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from lingprobe.atomic import TMP_SUFFIX, is_leftover, sync_folder, temporary_path
from lingprobe.errors import FeatureSetError
from lingprobe.feature_index import DTYPES, INDEX, FeatureIndex
from lingprobe.shards import write_shard

DEFAULT_SHARD_SIZE = 2048
NAMES = {dtype: name for name, dtype in DTYPES.items()}


def write_feature_folder(
    target: Path,
    chunks: Iterable[np.ndarray | Tensor],
    site_names: Sequence[str],
    dtype: torch.dtype | None,
    shard_size: int,
    overwrite: bool,
) -> FeatureIndex:
    """Write `chunks` as a feature set in `target` (see `FeatureSet.write`); return its index."""
    names = _checked_names(site_names)
    if isinstance(shard_size, bool) or not isinstance(shard_size, int) or shard_size < 1:
        raise FeatureSetError(
            f"shard_size={shard_size!r}: give a whole number of items per shard, at least 1"
            f" (default {DEFAULT_SHARD_SIZE})"
        )
    if dtype is not None and dtype not in NAMES:
        raise FeatureSetError(
            f"dtype={dtype!r}: a feature set stores torch.float32, torch.float16 or"
            " torch.bfloat16; give one of them, or None for the chunks' own"
        )
    _refuse_existing(target, overwrite)
    target.parent.mkdir(parents=True, exist_ok=True)
    for leftover in target.parent.glob(f".{target.name}.*{TMP_SUFFIX}"):
        if leftover.is_dir() and is_leftover(leftover):
            shutil.rmtree(leftover, ignore_errors=True)
    tmp = temporary_path(target)
    tmp.mkdir()
    try:
        index = _write_shards(tmp, chunks, names, dtype, shard_size)
        index.save(tmp / INDEX)
        sync_folder(tmp)
        _move_into_place(tmp, target, overwrite)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return index


def _write_shards(
    folder: Path,
    chunks: Iterable[np.ndarray | Tensor],
    names: tuple[str, ...],
    dtype: torch.dtype | None,
    shard_size: int,
) -> FeatureIndex:
    owner = secrets.token_hex(8)  # a shard copied in from another feature set has another key
    folders = tuple(f"site-{k:04d}" for k in range(len(names)))
    checksums: list[list[str]] = [[] for _ in names]
    buffer: Tensor | None = None
    filled = items = 0
    dim = 0

    def flush(rows: int) -> None:
        assert buffer is not None
        shard = len(checksums[0])
        for k, site in enumerate(folders):
            path = folder / site / f"shard-{shard:06d}.safetensors"
            checksums[k].append(write_shard(path, buffer[:rows, k], f"{owner}/{site}/{shard:06d}"))

    for number, chunk in enumerate(chunks):
        values = _as_tensor(chunk, number, len(names), dim, items)
        if buffer is None:
            dim = values.shape[2]
            stored = dtype or (values.dtype if values.dtype in NAMES else torch.float32)
            buffer = torch.empty(shard_size, len(names), dim, dtype=stored)
        start = 0
        while start < len(values):
            take = min(len(values) - start, shard_size - filled)
            part = buffer[filled : filled + take]
            part.copy_(values[start : start + take])
            _check_finite(part, values[start : start + take], items + start)
            filled, start = filled + take, start + take
            if filled == shard_size:
                flush(filled)
                filled = 0
        items += len(values)
    if buffer is None or items == 0:
        raise FeatureSetError(
            "chunks held no rows: give at least one [item, site, dim] block with items in it"
        )
    if filled:
        flush(filled)
    shape = (items, len(names), dim)
    return FeatureIndex(shape, NAMES[buffer.dtype], names, folders, shard_size, owner,
                        tuple(tuple(row) for row in checksums))  # fmt: skip


def _as_tensor(chunk: np.ndarray | Tensor, number: int, sites: int, dim: int, first: int) -> Tensor:
    """Chunk `number` as a CPU tensor, checked against the sites and dim before it."""
    if isinstance(chunk, Tensor):
        values = chunk.detach().cpu()
    elif isinstance(chunk, np.ndarray):
        if not (np.issubdtype(chunk.dtype, np.floating) or np.issubdtype(chunk.dtype, np.integer)):
            raise FeatureSetError(
                f"chunk {number} has dtype {chunk.dtype}: give real numbers (float or int)"
            )
        # a read-only array (a memory-mapped file opened "r") is read into memory once here
        writable = chunk.flags.writeable and chunk.flags.c_contiguous
        values = torch.from_numpy(np.ascontiguousarray(chunk) if writable else np.array(chunk))
    else:
        raise FeatureSetError(
            f"chunk {number} is a {type(chunk).__name__}: give numpy arrays or torch tensors"
            " shaped [item, site, dim]"
        )
    if values.dtype == torch.bool or values.is_complex():
        raise FeatureSetError(f"chunk {number} has dtype {values.dtype}: give real numbers")
    if values.ndim != 3 or values.shape[1] != sites or (dim and values.shape[2] != dim):
        want = f"[item, {sites}, {dim or 'dim'}]"
        raise FeatureSetError(
            f"chunk {number} (from item {first}) has shape {tuple(values.shape)}, expected"
            f" {want}: give [item, site, dim] blocks with one column per site name and one dim"
        )
    return values


def _check_finite(stored: Tensor, given: Tensor, first: int) -> None:
    """Refuse NaN or infinite values, and values the stored dtype overflows."""
    if bool(torch.isfinite(stored).all()):
        return
    bad = int(torch.nonzero(~torch.isfinite(stored).reshape(len(stored), -1).all(1))[0])
    value = given[bad][~torch.isfinite(stored[bad])][0].item()
    if np.isfinite(value):
        raise FeatureSetError(
            f"item {first + bad} holds {value!r}, beyond the range of {stored.dtype}; give"
            " dtype=torch.float32 (or torch.bfloat16), or scale the features"
        )
    raise FeatureSetError(
        f"item {first + bad} holds {value!r}: features must be finite; fix or drop that row"
    )


def _checked_names(site_names: Sequence[str]) -> tuple[str, ...]:
    if isinstance(site_names, str) or not all(isinstance(n, str) and n for n in site_names):
        raise FeatureSetError(
            f"site_names={site_names!r}: give a list of non-empty strings, one per site"
        )
    names = tuple(site_names)
    if not names or len(set(names)) != len(names):
        raise FeatureSetError(
            f"site_names={list(names)!r}: give one distinct name per site (at least one)"
        )
    return names


def _refuse_existing(target: Path, overwrite: bool) -> None:
    if target.exists() and not target.is_dir():
        raise FeatureSetError(f"{target} is a file; give a folder path for the feature set")
    if target.is_dir() and any(target.iterdir()) and not overwrite:
        raise FeatureSetError(
            f"{target} is not empty; give another folder, remove it, or pass overwrite=True"
        )


def _move_into_place(tmp: Path, target: Path, overwrite: bool) -> None:
    """Rename the finished folder over `target`; an old one is moved aside first."""
    _refuse_existing(target, overwrite)
    old = None
    if target.is_dir() and any(target.iterdir()):
        old = temporary_path(target)
        os.replace(target, old)
    elif target.is_dir():
        target.rmdir()
    os.replace(tmp, target)
    sync_folder(target.parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
