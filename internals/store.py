"""On-disk activation store: pooled features per (subject, data, site), in verified atomic shards.

Layout: `root/<subject key>/<data key>/<site>/shard-000000.safetensors`, each shard the pooled
rows of `shard_size` consecutive items. The subject key follows the model's content (checkpoint
files, every weight, the tokenizer: `Subject.content_key`) and the data key every item and the
pooling settings, so changed inputs never meet old shards. Beside the shards, `segments.safetensors`
records the (text digest, span) of every pooled segment of the list, through which another item
list finds the rows it shares with this one (`internals.span_reuse`).

Each shard is a `lingprobe.shards` file: its safetensors metadata records the key it belongs to
(`<subject>/<data>/<site>/<shard>`) and an XXH3-128 checksum of its dtype, shape and data bytes.
Reading verifies both: a shard with a flipped bit, a truncated one, or one copied in from another
site or subject is logged, deleted and recomputed, never served. Shards are written to a
temporary file, flushed and renamed into place, so a crash loses at most the shard in flight; the
temporary files a crashed run leaves are removed by the next run. No pickle anywhere.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from internals.items import SpanItem
from internals.segments import Segments
from internals.sites import Site
from lingprobe.atomic import atomic_write_bytes, remove_leftovers
from lingprobe.shards import ShardDamage, read_shard, shard_checksum, write_shard

log = logging.getLogger(__name__)
SEGMENTS = "segments.safetensors"

__all__ = [
    "ActivationStore",
    "atomic_write_bytes",
    "data_fingerprint",
    "fingerprint",
    "shard_checksum",
]


def fingerprint(payload: Any) -> str:
    """Short stable hash of a JSON-able value."""
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def data_fingerprint(items: Sequence[SpanItem], settings: dict[str, Any]) -> str:
    """Hash of every item's text and spans plus the settings that change pooled values."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    for item in items:
        row = [item.text, item.spans, item.text_pair, item.pair_spans]
        digest.update(json.dumps(row, ensure_ascii=False).encode())
        digest.update(b"\n")
    return digest.hexdigest()[:16]


class ActivationStore:
    """Shards of pooled features for one subject and one dataset."""

    def __init__(
        self,
        root: str | Path,
        subject_key: str,
        data_key: str,
        meta: dict[str, Any] | None = None,
    ):
        """Open (and, given `meta`, create) the folder of one subject and one item list;
        without `meta` the store only reads what is there (another list's rows, for reuse)."""
        self.folder = Path(root) / subject_key / data_key
        self.owner = f"{subject_key}/{data_key}"
        if meta is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        for leftover in remove_leftovers(self.folder):
            log.info("activation store: removed %s, left by an interrupted run", leftover)
        meta_path = self.folder / "meta.json"
        if not meta_path.exists():
            atomic_write_bytes(meta_path, json.dumps(meta, indent=2, default=str).encode())

    def record_segments(self, segments: Segments) -> None:
        """Record the item list's segments (once), so other lists can find its rows."""
        path = self.folder / SEGMENTS
        if not path.exists():
            segments.save(path, self.owner)

    def segments(self) -> Segments | None:
        """The recorded segments, verified; None if absent or damaged."""
        return Segments.load(self.folder / SEGMENTS, self.owner)

    def path(self, site: Site, shard: int) -> Path:
        """Where one site's shard lives."""
        return self.folder / site.name / f"shard-{shard:06d}.safetensors"

    def shard_key(self, site: Site, shard: int) -> str:
        """The identity a shard records and is checked against when read."""
        return f"{self.owner}/{site.name}/{shard:06d}"

    def load(
        self, site: Site, shard: int, shape: tuple[int, int], dtype: torch.dtype
    ) -> Tensor | None:
        """The stored shard, or None when absent or when it fails verification (then deleted)."""
        path = self.path(site, shard)
        if not path.exists():
            return None
        try:
            return read_shard(path, self.shard_key(site, shard), shape, dtype)
        except ShardDamage as damage:  # a damaged shard is recomputed, never trusted
            log.warning("activation store: %s is damaged (%s); recomputing it", path, damage)
            path.unlink(missing_ok=True)
            return None

    def save(self, site: Site, shard: int, tensor: Tensor) -> str:
        """Write one site's shard atomically, with its key and checksum; return the checksum."""
        return write_shard(self.path(site, shard), tensor, self.shard_key(site, shard))
