"""On-disk activation store: pooled features per (subject, data, site), in atomic shards.

Layout: `root/<subject fingerprint>/<data fingerprint>/<site>/shard-000000.safetensors`, each shard
the pooled rows of `shard_size` consecutive items. A shard is written to a temporary file, flushed
and renamed into place, so a crash or Ctrl-C loses at most the shard in flight; a shard that does
not read back with the expected shape (e.g. truncated by a full disk) is deleted and recomputed.
No pickle anywhere: tensors in safetensors, metadata in JSON.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from safetensors import safe_open
from safetensors.torch import save as safetensors_bytes
from torch import Tensor

from internals.items import SpanItem
from internals.sites import Site

log = logging.getLogger(__name__)
KEY = "features"


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` via a flushed temporary file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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

    def __init__(self, root: str | Path, subject_key: str, data_key: str, meta: dict[str, Any]):
        self.folder = Path(root) / subject_key / data_key
        self.folder.mkdir(parents=True, exist_ok=True)
        meta_path = self.folder / "meta.json"
        if not meta_path.exists():
            atomic_write_bytes(meta_path, json.dumps(meta, indent=2, default=str).encode())

    def path(self, site: Site, shard: int) -> Path:
        """Where one site's shard lives."""
        return self.folder / site.name / f"shard-{shard:06d}.safetensors"

    def load(self, site: Site, shard: int, shape: tuple[int, int]) -> Tensor | None:
        """The stored shard, or None when absent or unreadable (an unreadable one is removed)."""
        path = self.path(site, shard)
        if not path.exists():
            return None
        try:
            with safe_open(str(path), framework="pt") as handle:
                tensor = handle.get_tensor(KEY)
            if tuple(tensor.shape) != shape:
                raise ValueError(f"shape {tuple(tensor.shape)} != expected {shape}")
        except Exception as error:  # a damaged shard is recomputed, never trusted
            log.warning("activation store: %s is damaged (%s); recomputing it", path, error)
            path.unlink(missing_ok=True)
            return None
        return tensor

    def save(self, site: Site, shard: int, tensor: Tensor) -> None:
        """Write one site's shard atomically."""
        data = safetensors_bytes({KEY: tensor.detach().cpu().contiguous()})
        atomic_write_bytes(self.path(site, shard), data)
