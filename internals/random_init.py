"""Random twins: the same architecture with fresh, seeded weights (the random-encoder baseline)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

from internals.errors import OptionError

RANDOM_SCHEMES = ("xavier_uniform", "model")


@contextmanager
def seeded_global_rng(seed: int, model: nn.Module | None = None) -> Iterator[None]:
    """Run code that draws from torch's global generators (an HF model's own `_init_weights`,
    which takes no generator) from `seed`, and give the caller's generator states back after.

    The CPU generator is seeded, and so is the generator of every CUDA device `model` lives on.
    The caller's global RNG is neither read nor changed: the draws inside are the same whatever
    the caller did before, and the caller's next draws are the same as without this call.
    """
    tensors = list(model.parameters()) if model is not None else []
    gpus = sorted({t.device.index or 0 for t in tensors if t.device.type == "cuda"})
    with torch.random.fork_rng(devices=gpus):
        torch.default_generator.manual_seed(seed)
        for index in gpus:
            with torch.cuda.device(index):
                torch.cuda.manual_seed(seed)
        yield


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
        raise OptionError(f"random scheme {scheme!r}; choose one of {', '.join(RANDOM_SCHEMES)}")
    generator = torch.Generator(device="cpu").manual_seed(seed)
    if scheme == "model":
        init = getattr(model, "_init_weights", None)
        if init is None:
            raise OptionError(f"{type(model).__name__} has no _init_weights; use xavier_uniform")
        with seeded_global_rng(seed, model):
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
