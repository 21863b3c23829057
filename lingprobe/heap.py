"""Handing freed memory back to the system between the chunks of a long job."""

from __future__ import annotations

import ctypes
import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
MAPPED_FROM = 4 << 20  # C allocations this large or larger get their own mappings (bytes)
DYNAMIC_MAX = 32 << 20  # where glibc's own threshold adjustment stops on 64-bit (bytes)


def release_memory(young_only: bool = False) -> None:
    """Collect reference cycles (a backend's trace may leave some that hold tensors) and hand
    the C heap's free pages back to the system (glibc's `malloc_trim`; elsewhere a no-op), so
    the freed working copies of one extraction chunk, window or subject do not stay resident.
    Without it glibc keeps them: lazy extraction of MiniLM in 16 MiB windows grew about 21 MiB
    per window, and stays flat with it (benchmarks/HISTORY.md). `young_only`: collect only the
    two younger generations, which hold the cycles of the chunk just extracted; a full
    collection walks the whole heap (0.28 s each in the demo, 66 calls)."""
    gc.collect(1 if young_only else 2)
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


@contextmanager
def mapped_allocations(threshold: int = MAPPED_FROM) -> Iterator[None]:
    """Within: every C allocation of `threshold` bytes or more gets a mapping of its own, given
    back to the system when it is freed (glibc's `M_MMAP_THRESHOLD`; elsewhere nothing changes).

    glibc otherwise raises that threshold to the largest block freed so far (up to 32 MiB), after
    which a long job's mid-sized tensors (a batch's activations, its pooled rows) come from the
    heap, and the free gaps they leave between longer-lived blocks stay resident: lazy
    extraction's peak then grew with the number of items (MiniLM at every layer: 1.28x from 10k
    to 100k words, 1.13x with this; benchmarks/HISTORY.md). Process-wide, so nested and
    concurrent uses share one setting; when the last one ends the threshold is set to 32 MiB,
    where glibc's own adjustment ends up (a fixed threshold cannot be made dynamic again)."""
    global _MAPPED_USERS
    with _MAPPED_LOCK:
        _MAPPED_USERS += 1
        if _MAPPED_USERS == 1 and _LIBC is not None:
            _LIBC.mallopt(M_MMAP_THRESHOLD, threshold)
    try:
        yield
    finally:
        with _MAPPED_LOCK:
            _MAPPED_USERS -= 1
            if _MAPPED_USERS == 0 and _LIBC is not None:
                _LIBC.mallopt(M_MMAP_THRESHOLD, DYNAMIC_MAX)


def _glibc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None


_LIBC = _glibc()
_MAPPED_LOCK = threading.Lock()
_MAPPED_USERS = 0  # `mapped_allocations` blocks running now
