"""Where a model's weights live: one device, or split across devices, CPU and disk by accelerate.

`load_subject(..., device_map=..., max_memory=..., offload_folder=...)` hands these to Hugging Face
(`from_pretrained`) or, for a model object or a random twin, to accelerate (`dispatch_model`). A
model that is already dispatched (it has `hf_device_map`) is used as it is. Hooks then read each
site on the device where its layer runs, pooling happens there, and only pooled rows move.

Tested here on CPU with layers split between "cpu" and "disk"; the multi-GPU path is the same code
with GPU ids in the map, and needs CUDA (not tested here).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from internals.errors import UnsupportedModelError
from internals.quantized import plain_parts, quantization_of

DeviceMap = str | dict[str, Any]


def is_dispatched(model: nn.Module) -> bool:
    """True when accelerate placed the model (`hf_device_map`), so it must not be moved."""
    return bool(getattr(model, "hf_device_map", None))


def input_device(model: nn.Module) -> torch.device:
    """The device the model's inputs belong on: where its input embeddings run."""
    getter: Any = getattr(model, "get_input_embeddings", None)
    try:
        embeddings = getter() if callable(getter) else None
    except (NotImplementedError, AttributeError):  # models without a token embedding table
        embeddings = None
    hook = getattr(embeddings, "_hf_hook", None)
    execution = getattr(hook, "execution_device", None)
    if execution is not None:
        return torch.device(f"cuda:{execution}" if isinstance(execution, int) else execution)
    if embeddings is not None:
        weight = getattr(embeddings, "weight", None)
        if isinstance(weight, Tensor) and weight.device.type != "meta":
            return weight.device
    for tensor in model.parameters():
        if tensor.device.type != "meta":
            return tensor.device
    return torch.device("cpu")


def dispatch(
    model: nn.Module,
    device_map: DeviceMap,
    *,
    max_memory: dict[Any, Any] | None,
    offload_folder: str | Path | None,
) -> nn.Module:
    """Place a model object with accelerate (`"auto"`: fill the devices in `max_memory` order)."""
    from accelerate import dispatch_model, infer_auto_device_map

    if isinstance(device_map, dict):
        chosen = device_map
    elif device_map == "auto":
        no_split = getattr(model, "_no_split_modules", None) or []
        chosen = infer_auto_device_map(
            model, max_memory=max_memory, no_split_module_classes=list(no_split)
        )
    else:
        raise ValueError(
            f"device_map={device_map!r}; give 'auto' or a dict of module name -> device"
            " ('cpu', 'disk', a GPU index)"
        )
    if "disk" in set(map(str, chosen.values())) and offload_folder is None:
        raise ValueError("device_map puts modules on 'disk'; give offload_folder=<folder>")
    return dispatch_model(
        model,
        device_map=chosen,
        offload_dir=str(offload_folder) if offload_folder is not None else None,
    )


def place(
    model: nn.Module,
    *,
    device: torch.device | None,
    default_device: torch.device,
    dtype: torch.dtype | None,
    device_map: DeviceMap | None,
    max_memory: dict[Any, Any] | None,
    offload_folder: str | Path | None,
    given_object: bool,
) -> nn.Module:
    """Put a loaded model where `load_subject` was asked to, in its dtype.

    A dispatched model stays where accelerate put it. A quantised one stays where it was loaded
    unless `device` is given. A plain one is cast to `dtype`, then dispatched with `device_map`
    or moved to `device` (default: CUDA when there is one). A dispatched or quantised *object*
    cannot change dtype here: it was built in its dtype.
    """
    fixed = is_dispatched(model) or quantization_of(model) is not None
    if fixed:
        if given_object and dtype is not None:
            raise UnsupportedModelError(
                f"dtype={dtype}: a dispatched or quantised model object keeps the dtype it was"
                " built with; load it in the dtype you want"
            )
        if not is_dispatched(model) and device is not None:
            model = model.to(device)
        return model
    if dtype is not None:
        model = model.to(dtype)
    if device_map is not None:
        return dispatch(model, device_map, max_memory=max_memory, offload_folder=offload_folder)
    return model.to(device or default_device)


def refuse_dispatched_twin(model: nn.Module) -> None:
    """A dispatched object's offloaded weights live outside it: it cannot be re-drawn in place."""
    if is_dispatched(model):
        raise UnsupportedModelError(
            "init='random' needs the model object before it is dispatched (its offloaded weights"
            " live outside the module); pass the plain model with device_map=..."
        )


def as_dtype(dtype: torch.dtype | str | None) -> torch.dtype | None:
    """`"bfloat16"` / `"float16"` / `"float32"` (or a torch dtype) as a torch dtype."""
    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    chosen = getattr(torch, str(dtype).removeprefix("torch."), None)
    if not isinstance(chosen, torch.dtype) or not chosen.is_floating_point:
        raise ValueError(f"dtype={dtype!r}; choose 'bfloat16', 'float16' or 'float32'")
    return chosen


def named_tensors(model: nn.Module) -> Iterator[tuple[str, Tensor]]:
    """Every parameter and buffer by name as plain tensors, read from the offload store if needed.

    An offloaded weight's placeholder lives on the meta device and the real values sit in the
    module's accelerate hook (`weights_map`); this yields the real values, one at a time. A
    quantised weight (a tensor subclass) is yielded as its stored parts (`name.qdata`, ...).
    """
    for module_name, module in model.named_modules():
        hook = getattr(module, "_hf_hook", None)
        stored = getattr(hook, "weights_map", None)
        own = [*module.named_parameters(recurse=False), *module.named_buffers(recurse=False)]
        for name, tensor in own:
            full = f"{module_name}.{name}" if module_name else name
            if tensor.device.type == "meta" and stored is not None:
                tensor = stored[name]
            yield from plain_parts(full, tensor)
