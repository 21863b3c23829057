"""Handing freed memory back to the system between the chunks of a long job."""

from __future__ import annotations

import ctypes
import gc


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


def _glibc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None


_LIBC = _glibc()
