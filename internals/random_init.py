"""Random twins: the same architecture with fresh, seeded weights (the random-encoder baseline)."""

from __future__ import annotations

import torch
from torch import nn

RANDOM_SCHEMES = ("xavier_uniform", "model")


def reinitialize(model: nn.Module, scheme: str, seed: int) -> nn.Module:
    """Re-draw every parameter in place, reproducibly from `seed`.

    `xavier_uniform` (default; Tenney et al. 2019 initialise their random encoders so):
    Glorot-uniform matrices, zero biases, unit norm scales. `model`: the architecture's own
    `_init_weights`, as `from_config` would give.
    """
    if scheme not in RANDOM_SCHEMES:
        raise ValueError(f"random scheme {scheme!r}; choose one of {', '.join(RANDOM_SCHEMES)}")
    generator = torch.Generator(device="cpu").manual_seed(seed)
    if scheme == "model":
        torch.manual_seed(seed)
        init = getattr(model, "_init_weights", None)
        if init is None:
            raise ValueError(f"{type(model).__name__} has no _init_weights; use xavier_uniform")
        model.apply(init)
        return model
    with torch.no_grad():
        for name, param in model.named_parameters():
            if param.dim() >= 2:
                fresh = torch.empty(param.shape, dtype=torch.float32)
                nn.init.xavier_uniform_(fresh, generator=generator)
                param.copy_(fresh)
            elif name.endswith("bias"):
                param.zero_()
            else:
                param.fill_(1.0)
    return model
