"""TorchScript units compiled from source, for hot loops that worker threads run.

A torch operation called from Python releases the interpreter lock while it computes and takes
it back afterwards; two worker threads running many small operations then hand the lock back
and forth at every one of them, and wait. A TorchScript function runs its operations without
the lock, so a whole block of work takes it once. The units here run the very operations of the
Python code they replace, in the same order, so their numbers are the same bit for bit.

Sources are compiled on first use (`torch.jit.CompilationUnit`, tens of milliseconds each).
Where TorchScript is unavailable `compiled` returns None, with one warning, and callers keep
their Python path.
"""

from __future__ import annotations

import warnings
from functools import cache
from typing import Any

import torch


@cache
def compiled(source: str) -> Any:
    """The compiled unit of TorchScript `source`, or None where it cannot be compiled."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # TorchScript's deprecation notice
            return torch.jit.CompilationUnit(source)
    except Exception as error:
        warnings.warn(
            f"probes: TorchScript could not compile a hot loop ({error}); it runs as Python"
            " instead (the same numbers, slower with several threads).",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
