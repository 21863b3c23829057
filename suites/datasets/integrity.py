"""Checking a file against the registry's sha256, once per process for an unchanged file, and
the record of files used as they are although they differ (`trust_local`), for the manifest."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

CHUNK = 1 << 20
# (path, size, mtime_ns, sha256) of files already verified in this process
_verified: set[tuple[str, int, int, str]] = set()
# path -> what the manifest records of a file this process used as it is (`trust_local`)
_trusted: dict[str, dict[str, Any]] = {}


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


def trust(path: Path, registry_path: str, sha256: str) -> None:
    """Record that `path` is used as it is although its bytes differ from the registry's."""
    _trusted[str(path.resolve())] = {
        "path": str(path),
        "registry_path": registry_path,
        "registry_sha256": sha256,
        "sha256": sha256_of(path),
    }


def trusted_files() -> list[dict[str, Any]]:
    """Every file this process used as it is under `trust_local`, as the manifest lists them."""
    return list(_trusted.values())
