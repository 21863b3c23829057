"""Random twins: the same architecture with fresh, seeded weights (the random-encoder baseline)."""

from __future__ import annotations

import torch
from torch import nn

RANDOM_SCHEMES = ("xavier_uniform", "model")


def reinitialize(model: nn.Module, scheme: str, seed: int) -> nn.Module:
    """Re-draw every parameter in place, reproducibly from `seed`.

    `xavier_uniform` (default; Tenney et al. 2019 initialise their random encoders so):
    Glorot-uniform weight matrices of every linear map, zero biases, unit norm scales; embedding
    tables (token, position, relative-position) are drawn from N(0, initializer_range) like the
    model's own init, because Glorot on a 30k-row table shrinks token identity ~6x below the
    position signal and a deep random stack then maps every token to nearly the same vector.
    `model`: the architecture's own `_init_weights`, as `from_config` would give.
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
    config = getattr(model, "config", None)
    std = float(getattr(config, "initializer_range", 0.02) or 0.02)
    embeddings = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)}
    with torch.no_grad():
        for name, param in model.named_parameters():
            if id(param) in embeddings:
                fresh = torch.empty(param.shape, dtype=torch.float32)
                param.copy_(fresh.normal_(0.0, std, generator=generator))
            elif param.dim() >= 2:
                fresh = torch.empty(param.shape, dtype=torch.float32)
                nn.init.xavier_uniform_(fresh, generator=generator)
                param.copy_(fresh)
            elif name.endswith("bias"):
                param.zero_()
            else:
                param.fill_(1.0)
    return model
