"""Content digests: XXH3-128 of bytes and files (about 20 GB/s, so verifying costs little).

XXH3 is not a cryptographic hash: it detects accidental change (a flipped bit, a truncated or
swapped file, an edited checkpoint) with a 2^-128 chance of a miss, which is what caches and
result folders need; it does not defend against someone forging a collision on purpose.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import xxhash

CHUNK = 1 << 24  # 16 MiB per read when hashing a file


def bytes_digest(*parts: bytes | bytearray | memoryview) -> str:
    """Hex XXH3-128 digest of the concatenated `parts`."""
    digest = xxhash.xxh3_128()
    for part in parts:
        digest.update(part)
    return digest.hexdigest()


def file_digest(path: str | os.PathLike[str]) -> str:
    """Hex XXH3-128 digest of a file's bytes, read in chunks."""
    digest = xxhash.xxh3_128()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def combined_digest(entries: Iterable[tuple[str, str]]) -> str:
    """One digest of named digests (`(name, digest)` pairs, in the order given)."""
    digest = xxhash.xxh3_128()
    for name, value in entries:
        digest.update(f"{name}\0{value}\n".encode())
    return digest.hexdigest()
