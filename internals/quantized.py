"""Quantised models: which library quantised a model, and why it has no random twin.

Models quantised by the usual libraries are read like any other: their forward pass dequantises
on the fly, hooks see ordinary floating-point activations, and pooled features come out in
float32. Recognised: bitsandbytes (8-bit and 4-bit; needs CUDA, not tested here), torchao,
optimum-quanto (tested here on CPU with int8 weights), HQQ, and GPTQ/AWQ (auto-gptq, gptqmodel,
autoawq) — from the Hugging Face `quantization_config`, the quantiser attached by
`from_pretrained`, or the classes of the model's modules and weights.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
from torch import Tensor, nn

from internals.errors import UnsupportedModelError

# Top-level package of a module or tensor class -> library name.
LIBRARIES = {
    "bitsandbytes": "bitsandbytes",
    "torchao": "torchao",
    "optimum": "optimum-quanto",
    "hqq": "hqq",
    "auto_gptq": "gptq",
    "gptqmodel": "gptq",
    "awq": "awq",
}


def quantization_of(model: nn.Module) -> str | None:
    """The library that quantised `model`, or None for a plain floating-point model."""
    config: Any = getattr(getattr(model, "config", None), "quantization_config", None)
    if config is not None:
        method = config.get("quant_method") if isinstance(config, dict) else None
        method = method or getattr(config, "quant_method", None)
        return str(getattr(method, "value", method) or "unknown")
    if getattr(model, "hf_quantizer", None) is not None:
        return type(model.hf_quantizer).__name__
    for module in model.modules():
        library = _library(type(module))
        if library is not None:
            return library
        for tensor in module.parameters(recurse=False):
            library = _library(type(tensor))
            if library is not None:
                return library
    return None


def plain_parts(name: str, tensor: Tensor) -> Iterator[tuple[str, Tensor]]:
    """A tensor as plain tensors: itself, or the stored parts of a quantised tensor subclass.

    torchao and quanto weights are tensor subclasses whose raw storage (int8 data, scales, zero
    points) is what they hold; plain ops such as `view` may not be defined on them.
    """
    if type(tensor) in (Tensor, nn.Parameter) or not hasattr(tensor, "__tensor_flatten__"):
        yield name, tensor
        return
    inner, _ = tensor.__tensor_flatten__()
    for part in inner:
        value = getattr(tensor, part)
        if isinstance(value, torch.Tensor):
            yield from plain_parts(f"{name}.{part}", value)


def _library(kind: type) -> str | None:
    root = kind.__module__.split(".", 1)[0]
    return LIBRARIES.get(root)


def refuse_random_twin(model: nn.Module) -> None:
    """Raise a clear error when asked for the random twin of a quantised model."""
    library = quantization_of(model)
    if library is not None:
        raise UnsupportedModelError(
            f"init='random' cannot re-draw a model quantised by {library}: its weights are"
            " stored quantised, with scales computed from the trained values, so there is no"
            " random counterpart to draw. Load the unquantised model with init='random' (and"
            " quantise that yourself if you need to)"
        )
