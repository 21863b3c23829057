"""Host buffers for a fit's device: pinned for a CUDA device, plain everywhere else.

A trainer that reads a `FeatureSet` for a CUDA device reads each block of a group from disk into
pinned (page-locked) host memory and copies it into the group's tensor on the device without
blocking, on a side CUDA stream of its own; the trainer's stream waits for the copies (an event)
only when it takes the group (`Arrival.take`). As `site_reader.site_groups` reads the next group
in a background thread, the next group's disk reads and its copy overlap the training of the
current one. The group is then held on the device, not on the host; the host holds only the
blocks on their way (about `site_reader.READ_BYTES` each, which PyTorch's caching host allocator
keeps for reuse, rounded up to a power of two). A budget counts the group's bytes wherever they
are held. On any other device (the CPU) nothing is pinned: each block is read straight into a
view of one host tensor, as a plain read would, and the fit gets that tensor.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast, runtime_checkable

import torch
from torch import Tensor

CPU = torch.device("cpu")
Where = slice | tuple[int | slice, slice]  # a block of the result's leading axes
Fill = Callable[[Where, Tensor], Tensor]  # reads block `where` into a host buffer, returns it


@runtime_checkable
class CopyStream(Protocol):
    """What the readers use of a `torch.cuda.Stream` (typed by use: torch's CPU and CUDA builds
    define the class differently, and tests stand in for it without a GPU)."""

    def wait_event(self, event: Any) -> Any:
        """Make the stream's later work wait for `event`."""
        ...


@runtime_checkable
class CopyEvent(Protocol):
    """What the readers use of a `torch.cuda.Event` (see `CopyStream`)."""

    def record(self, stream: Any = None) -> Any:
        """Mark the point `stream`'s work has reached."""
        ...


def pins(device: torch.device) -> bool:
    """Whether host buffers bound for `device` are pinned: for a CUDA device only."""
    return device.type == "cuda"


def exact(device: torch.device) -> torch.device:
    """`device` with its index: a bare `cuda` is the calling thread's current CUDA device (a
    reader thread's own current device may be another)."""
    if pins(device) and device.index is None:
        return torch.device("cuda", torch.cuda.current_device())
    return device


@functools.cache
def side_stream(device: torch.device) -> CopyStream:
    """The one stream that copies features onto `device` (indexed): every group is then made
    from that stream's cached blocks, which the groups before it have freed."""
    return torch.cuda.Stream(device)


def allocate(
    shape: Sequence[int], dtype: torch.dtype, device: torch.device, pin_memory: bool
) -> Tensor:
    """An uninitialised tensor: every buffer of the readers is allocated here."""
    return torch.empty(tuple(shape), dtype=dtype, device=device, pin_memory=pin_memory)


def host_empty(shape: Sequence[int], dtype: torch.dtype, device: torch.device) -> Tensor:
    """An uninitialised host tensor for data bound for `device`: pinned for a CUDA device (so
    its copy there can run without blocking), pageable otherwise."""
    return allocate(shape, dtype, CPU, pins(device))


@dataclass
class Arrival:
    """A tensor read for a device; `take()` it in the thread that computes on it."""

    tensor: Tensor
    copied: CopyEvent | None = None  # recorded after the copies onto a CUDA device

    def take(self) -> Tensor:
        """The tensor. On CUDA the current stream waits for its copies (the host does not), and
        its memory is not reused until the work this stream queues on it is done."""
        if self.copied is not None:
            stream = torch.cuda.current_stream(self.tensor.device)
            stream.wait_event(cast(torch.cuda.Event, self.copied))
            self.tensor.record_stream(stream)
        return self.tensor


def read_blocks(
    shape: Sequence[int],
    dtype: torch.dtype,
    device: torch.device,
    fill: Fill,
    blocks: Sequence[Where],
) -> Arrival:
    """A tensor of `shape` whose every block `out[where]` is read by `fill(where, buffer)`.

    For a CUDA device (give it with its index: `exact`) the tensor is made there, each block
    read into a pinned host buffer and copied without blocking on `side_stream`; elsewhere
    the tensor is made on the host and each block read into a view of it (the CPU path: no
    pinning, no copy)."""
    if not pins(device):
        out = allocate(shape, dtype, CPU, False)
        for where in blocks:
            fill(where, out[where])
        return Arrival(out)
    device = exact(device)
    side = side_stream(device)
    with torch.cuda.stream(cast(torch.cuda.Stream, side)):
        out = allocate(shape, dtype, device, False)
        for where in blocks:
            part = out[where]
            host = fill(where, host_empty(part.shape, dtype, device))
            # the caching host allocator keeps `host` until this copy is done
            part.copy_(host, non_blocking=True)
        copied = torch.cuda.Event()
        copied.record(cast(torch.cuda.Stream, side))
    return Arrival(out, copied)


def shard_blocks(rows: Tensor, shard_size: int, per_block: int) -> list[slice]:
    """Consecutive runs of `rows` (item numbers) of about `per_block` rows each, cut only where
    the shard changes, so a shard is read in one block."""
    if not len(rows):
        return []
    shard = rows // shard_size
    cuts = [*((shard[1:] != shard[:-1]).nonzero().flatten() + 1).tolist(), len(rows)]
    blocks, start = [], 0
    for cut in cuts:
        if cut - start >= per_block or cut == len(rows):
            blocks.append(slice(start, cut))
            start = cut
    return blocks
