"""Each batch's pooled rows, from the model's device into the features on the host.

The rows of every site are stacked where they were pooled into one `[piece, site, dim]` float32
block. On a CUDA device that block is copied into pinned host memory without blocking, and it is
written into the features only once the next batch's forward has been queued: the copy and the
write then overlap the GPU's work on the next batch instead of holding it back. One synchronous
pageable copy per site cost nearly as much as the bare forward of a SmolLM2-shaped model
(measured by `benchmarks/bench_cuda_extract.py`; figures in `benchmarks/HISTORY.md`).
Elsewhere (CPU, other devices) the block is written at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from jaxtyping import Float, Int
from torch import Tensor

from internals.item_rows import ItemRows

Pending = tuple[Int[np.ndarray, " piece"], Tensor, torch.cuda.Event, Callable[[], None]]


class PooledCopies:
    """`put` each batch's pooled rows, then `finish()` before reading the features."""

    def __init__(self, features: ItemRows) -> None:
        self.features = features
        self.pending: Pending | None = None  # the last CUDA batch, copied but not yet written

    def put(
        self,
        pieces: Int[np.ndarray, " piece"],
        pooled: Sequence[Float[Tensor, "piece dim"]],
        written: Callable[[], None],
    ) -> None:
        """The rows `[piece, dim]` of each site (in site order); `written()` once they are in."""
        device = pooled[0].device
        block = torch.stack([rows.to(device, torch.float32) for rows in pooled], dim=1)
        if device.type != "cuda":
            self.features.write(pieces, block.to("cpu"))
            written()
            return
        host = torch.empty(block.shape, dtype=torch.float32, pin_memory=True)
        host.copy_(block, non_blocking=True)
        copied = torch.cuda.Event()
        copied.record(torch.cuda.current_stream(device))
        previous, self.pending = self.pending, (pieces, host, copied, written)
        if previous is not None:
            _write(self.features, previous)

    def finish(self) -> None:
        """Write the last batch still on its way."""
        if self.pending is not None:
            pending, self.pending = self.pending, None
            _write(self.features, pending)


def _write(features: ItemRows, pending: Pending) -> None:
    pieces, host, copied, written = pending
    copied.synchronize()
    features.write(pieces, host)
    written()
