"""Checking a requested torch device before anything is moved onto it."""

from __future__ import annotations

import torch

from lingprobe.errors import DeviceError


def checked_device(device: torch.device | str) -> torch.device:
    """`torch.device(device)`, refused with `DeviceError` when this machine cannot use it.

    Catches what torch reports late and obscurely: an unknown device string, `cuda` without CUDA
    (an AssertionError deep in a `.to()` today), a GPU index past the last GPU, `mps` off macOS.
    """
    try:
        target = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise DeviceError(
            f"device={device!r} is not a device torch knows ({str(error).splitlines()[0]});"
            " write e.g. 'cpu', 'cuda', 'cuda:1' or 'mps'"
        ) from None
    if target.type == "cuda":
        if not torch.cuda.is_available():
            raise DeviceError(
                f"device={device!r}: CUDA is not available here (torch.cuda.is_available() is"
                " False: no GPU, or a CPU-only torch build); pass device='cpu' or leave the"
                " device unset to use what the machine has"
            )
        count = torch.cuda.device_count()
        if target.index is not None and target.index >= count:
            raise DeviceError(
                f"device={device!r}: this machine has {count} CUDA device(s), numbered"
                f" 0..{count - 1}; choose one of them"
            )
    if target.type == "mps" and not torch.backends.mps.is_available():
        raise DeviceError(
            f"device={device!r}: Apple's MPS backend is not available here; pass device='cpu'"
        )
    return target
