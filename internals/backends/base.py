"""What every hook backend receives and returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from torch import Tensor

from internals.heads import PartHeads
from internals.pool import PoolHow, TokenSegments
from internals.sites import Site


@dataclass(frozen=True)
class ModelBatch:
    """One padded batch: forward kwargs on the device, and the segments to pool per part."""

    inputs: dict[str, Tensor]
    segments: dict[str, TokenSegments]


@runtime_checkable
class HookBackend(Protocol):
    """Runs a forward pass and returns, per requested site, the pooled `[segment, dim]` rows."""

    name: str
    streams: tuple[str, ...]
    heads: dict[str, PartHeads]  # the parts whose attention heads it reads

    def pooled(self, batch: ModelBatch, sites: Sequence[Site], how: PoolHow) -> dict[Site, Tensor]:
        """Pooled rows per site; the forward stops after the last requested site."""
        ...


class StopForward(Exception):
    """Raised from a hook once every requested site has been read."""
