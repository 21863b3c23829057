"""Steering: add `alpha * direction` to the residual stream at a site (activation addition).

`Steering(direction, alpha)` is the edit `h -> h + alpha * direction`, applied at every token
position; give it to `internals.intervene.lm_loss(subject, texts, {site: edit})` to score the
model's loss with it (inside one nnsight trace, as amnesic probing does). `steer(subject, site,
direction, alpha)` is a context manager that applies the same edit through a torch hook to every
forward pass of `subject.model` inside its block (generation included). The hook sits where the
site's value lives (`internals.sites`): the first block's input for layer 0, the final norm's
output for the last layer where the part has one, block `k - 1`'s output otherwise. With a
mass-mean direction (`probes.directions`, `mean(positive) - mean(negative)`), `alpha = 1` moves
the mean of the negative items onto the mean of the positive ones at that site.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from jaxtyping import Float
from torch import Tensor

from internals.errors import InterventionError
from internals.sites import RESID_POST, Site, check
from internals.transformer_subject import TransformerSubject


@dataclass(frozen=True)
class Steering:
    """The edit `hidden -> hidden + alpha * direction` (in the hidden state's dtype/device)."""

    direction: Float[Tensor, " dim"]
    alpha: float

    def __call__(self, hidden: Tensor) -> Tensor:
        step = self.alpha * self.direction.to(device=hidden.device, dtype=torch.float32)
        return hidden + step.to(hidden.dtype)


def steering(subject: TransformerSubject, site: Site, direction: Tensor, alpha: float) -> Steering:
    """A checked `Steering` for `site` of `subject`: a resid_post site it has, a finite
    `[dim]` direction of the subject's width, a finite alpha."""
    if not isinstance(subject, TransformerSubject):
        raise InterventionError(
            f"steering needs a transformer subject, got {type(subject).__name__}"
        )
    if site.stream != RESID_POST:
        raise InterventionError(f"site {site.name}: only resid_post sites can be steered")
    check(subject, [site])
    vector = torch.as_tensor(direction).detach()
    if vector.shape != (subject.dim,) or not vector.is_floating_point():
        raise InterventionError(
            f"direction: {vector.dtype} of shape {tuple(vector.shape)}; give a float"
            f" [{subject.dim}] vector of {subject.name}'s width (e.g. from probes.directions)"
        )
    if not (bool(vector.isfinite().all()) and math.isfinite(alpha)):
        raise InterventionError(f"direction or alpha={alpha!r} is not finite; give finite values")
    return Steering(vector.float().cpu(), float(alpha))


@contextmanager
def steer(
    subject: TransformerSubject, site: Site, direction: Tensor, alpha: float
) -> Iterator[Steering]:
    """Within the block, every forward pass of `subject.model` adds `alpha * direction` to the
    hidden state at `site` (every token position); the hook is removed on exit, even on error.

    Examples:
        with steer(subject, Site("decoder", 6), found.vector("decoder.6"), alpha=4.0):
            logits = subject.model(**inputs).logits
    """
    edit = steering(subject, site, direction, alpha)
    part = subject.layout.parts[site.part]
    model: Any = subject.model
    blocks = model.get_submodule(part.layers)
    if site.layer == 0:
        handle = blocks[0].register_forward_pre_hook(_input_hook(edit), with_kwargs=True)
    else:
        at_norm = site.layer == part.n_layers and part.final_norm is not None
        module = model.get_submodule(part.final_norm) if at_norm else blocks[site.layer - 1]
        handle = module.register_forward_hook(_output_hook(edit))
    try:
        yield edit
    finally:
        handle.remove()


def _input_hook(edit: Steering) -> Any:
    """A pre-hook editing a block's hidden-state input (positional or keyword)."""

    def hook(module: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        if args:
            return (edit(args[0]), *args[1:]), kwargs
        return args, {**kwargs, "hidden_states": edit(kwargs["hidden_states"])}

    return hook


def _output_hook(edit: Steering) -> Any:
    """A hook editing a module's output (a tensor, or the first entry of a tuple)."""

    def hook(module: Any, args: tuple, output: Any) -> Any:
        if isinstance(output, tuple | list):
            return (edit(output[0]), *output[1:])
        return edit(output)

    return hook
