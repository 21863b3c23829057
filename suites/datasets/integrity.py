"""Checking a file against the registry's sha256, once per process for an unchanged file."""

from __future__ import annotations

import hashlib
from pathlib import Path

CHUNK = 1 << 20
# (path, size, mtime_ns, sha256) of files already verified in this process
_verified: set[tuple[str, int, int, str]] = set()


def sha256_of(path: Path) -> str:
    """The hex sha256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def matches(path: Path, sha256: str) -> bool:
    """True when `path` holds bytes with this sha256 (re-hashed only when the file changed)."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, sha256)
    if key in _verified:
        return True
    if sha256_of(path) != sha256:
        return False
    _verified.add(key)
    return True
