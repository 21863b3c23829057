"""The pooled segments of an item list by content: each segment's text digest and character span.

An item is pooled into `width` segments (one per span, or its whole text; then its pair's). A
segment's pooled row depends only on the subject, the reading settings, the site, the segment's
text and its span, never on the item or the list around it. So the activation store records the
segments of every item list it holds (`segments.safetensors` beside the shards), and a later list
that asks for the same (text, span) reads the rows already there (`internals.span_reuse`) instead
of running the model again: UPOS and dependency labels of one treebank read its words once.

The record is verified like a shard (its key and an XXH3-128 checksum), and written atomically.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import xxhash
from safetensors import safe_open
from safetensors.torch import save as safetensors_bytes

from internals.items import SpanItem
from lingprobe.atomic import atomic_write_bytes
from lingprobe.digest import bytes_digest

log = logging.getLogger(__name__)
FORMAT = "lingprobe-segments/1"
# odd 64-bit constants that spread a span's ends over a lookup key (golden ratio, xxh64 prime 2)
START_MIX, END_MIX = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F)


@dataclass(frozen=True)
class Segments:
    """Segments in feature order (item by item): `digests` `[segment, 16]` (XXH3-128 of the
    segment's text, UTF-8), `spans` `[segment, 2]` (a whole text is `(0, len(text))`), and
    `width`, the segments per item."""

    digests: np.ndarray
    spans: np.ndarray
    width: int

    @classmethod
    def of(cls, items: Sequence[SpanItem], width: int) -> Segments:
        """The segments of validated items (all with `width` segments)."""
        known: dict[str, bytes] = {}
        digests: list[bytes] = []
        spans: list[tuple[int, int]] = []
        for item in items:
            for text, item_spans in item.texts():
                digest = known.get(text)
                if digest is None:
                    digest = known[text] = xxhash.xxh3_128_digest(text.encode("utf-8"))
                for span in item_spans or ((0, len(text)),):
                    digests.append(digest)
                    spans.append(span)
        return cls(
            np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(-1, 16).copy(),
            np.asarray(spans, dtype=np.int64).reshape(-1, 2),
            width,
        )

    @property
    def n_items(self) -> int:
        """Items these segments belong to."""
        return len(self.spans) // self.width

    def of_items(self, rows: slice) -> Segments:
        """The segments of items `rows` (a slice of the list)."""
        part = slice(rows.start * self.width, rows.stop * self.width)
        return Segments(self.digests[part], self.spans[part], self.width)

    def keys(self) -> np.ndarray:
        """A 64-bit lookup key per segment (text digest and span mixed; a match is confirmed on
        the full digest and span, so a collision only costs a comparison)."""
        head = np.ascontiguousarray(self.digests[:, :8]).view(np.uint64).ravel()
        start, end = self.spans[:, 0].astype(np.uint64), self.spans[:, 1].astype(np.uint64)
        return head ^ (start * START_MIX) ^ (end * END_MIX)

    def save(self, path: Path, owner: str) -> None:
        """Write the record atomically, with its owner (the store folder's key) and checksum."""
        tensors = {
            "digests": torch.from_numpy(np.ascontiguousarray(self.digests)),
            "spans": torch.from_numpy(np.ascontiguousarray(self.spans)),
        }
        meta = {"format": FORMAT, "key": owner, "width": str(self.width)}
        meta["checksum"] = _checksum(tensors, self.width)
        atomic_write_bytes(path, safetensors_bytes(tensors, metadata=meta))

    @classmethod
    def load(cls, path: Path, owner: str) -> Segments | None:
        """The record at `path`, or None when absent or when it fails verification (then it is
        deleted; its item list writes it again the next time it is read)."""
        if not path.exists():
            return None
        try:
            with safe_open(str(path), framework="pt") as handle:
                meta = handle.metadata() or {}
                tensors = {name: handle.get_tensor(name) for name in ("digests", "spans")}
            width = int(meta.get("width", "0"))
            problem = None
            if meta.get("format") != FORMAT or meta.get("key") != owner:
                problem = f"format {meta.get('format')!r} of {meta.get('key')!r}, not {owner!r}"
            elif meta.get("checksum") != _checksum(tensors, width):
                problem = "checksum mismatch: its bytes changed after it was written"
        except Exception as error:  # unreadable: never trusted
            problem = f"unreadable: {type(error).__name__}: {str(error)[:200]}"
        if problem is not None:
            log.warning("activation store: %s is damaged (%s); not used", path, problem)
            path.unlink(missing_ok=True)
            return None
        return cls(tensors["digests"].numpy(), tensors["spans"].numpy(), width)


def _checksum(tensors: dict[str, torch.Tensor], width: int) -> str:
    parts = [f"{width}|".encode()]
    parts += [np.ascontiguousarray(t.numpy()).tobytes() for t in tensors.values()]
    return bytes_digest(*parts)
