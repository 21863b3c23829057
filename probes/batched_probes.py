"""Batched probe parameters: what every probe kind shares (`probes.linear`, `probes.mlp`).

Training layout: every tensor is `[mask, site, seed, variant, *per-probe shape]` (sites outer,
shared order) or `[mask, seed, site, variant, ...]` (seeds outer, per-seed order; see
`blocks.py`), weights stored output-major (`[out, in]`, as `nn.Linear`) and activations
feature-major (`[out, batch]`), the faster orientation for these skinny GEMMs. Training works in
blocks of one mask and a range of (site, seed) units, whose slice of `[outer * inner, variant,
...]` is contiguous.
The variants of a (mask, site, seed) read the same input rows, so their first layer is one GEMM,
`[variants * out, dim] @ [dim, batch]`, and all (site, seed) pairs of a block are one batched
matmul. Each output row is its own dot product and bias and AdamW are elementwise, so fusing
changes no probe's numbers. The training GEMMs run in the inputs' dtype (bfloat16 opt-in:
weights cast per step, gradients accumulated into float32). Results (`export`) are in probe
order (mask, seed, site, variant).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from jaxtyping import Bool, Float
from torch import Tensor

from probes._grid.blocks import Block
from probes._grid.streams import keyed_generator
from probes.grid import ProbeLayout


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: per-probe shape (weights `[out, in]`) and its layer's fan-in (the init
    bound is 1/sqrt(fan_in), as `nn.Linear`)."""

    shape: tuple[int, ...]
    fan_in: int


class BatchedProbes:
    """Parameters, gradients and best-epoch copies of every probe of a grid."""

    specs: dict[str, ParamSpec]

    def __init__(self, layout: ProbeLayout, seeds_outer: bool = False) -> None:
        self.layout, self.seeds_outer = layout, seeds_outer
        m, s, t, v = layout.shape
        outer = (s, t) if seeds_outer else (t, s)
        self.params = {n: torch.empty(m, *outer, v, *sp.shape) for n, sp in self.specs.items()}
        for i, seed in enumerate(layout.seeds):
            gen = keyed_generator("init", seed)
            for name, spec in self.specs.items():
                bound = 1 / math.sqrt(spec.fan_in)
                draw = torch.empty(spec.shape).uniform_(-bound, bound, generator=gen)
                self.sites_outer(self.params[name])[:, :, i] = draw
        self.grads = {n: torch.zeros_like(p) for n, p in self.params.items()}
        self.best = {n: p.clone() for n, p in self.params.items()}

    def to(self, device: torch.device) -> BatchedProbes:
        """Move every tensor to `device`."""
        for group in (self.params, self.grads, self.best):
            for name in group:
                group[name] = group[name].to(device)
        return self

    def sites_outer(self, t: Tensor) -> Tensor:
        """A training-layout tensor as `[mask, site, seed, variant, ...]` (a view)."""
        return t.transpose(1, 2) if self.seeds_outer else t

    def unit_state_bytes(self) -> int:
        """Bytes one (site, seed) unit trains with: its parameters of every variant, their
        gradients and two AdamW moments."""
        return 4 * sum(p[0, 0, 0].numel() * p.element_size() for p in self.params.values())

    def keep_best(self, improved: Bool[Tensor, "mask seed site variant"]) -> None:
        """Copy the current parameters of the improved probes into the best-epoch copies."""
        flags = improved.transpose(1, 2)  # training layout [mask, site, seed, variant]
        for name, param in self.params.items():
            flag = flags.reshape(*flags.shape, *([1] * len(self.specs[name].shape)))
            best = self.sites_outer(self.best[name])
            best.copy_(torch.where(flag, self.sites_outer(param), best))

    def finite(self) -> Bool[Tensor, "mask seed site variant"]:
        """Whether every current parameter of each probe is finite (no NaN, no inf)."""
        checks = [
            self.sites_outer(p).isfinite().flatten(4).all(dim=-1) for p in self.params.values()
        ]
        return torch.stack(checks).all(dim=0).transpose(1, 2)  # from the training layout

    def probe_order(self, t: Tensor) -> Tensor:
        """A training-layout tensor as `[P, *per-probe shape]` in probe order."""
        return self.sites_outer(t).transpose(1, 2).reshape(-1, *t.shape[4:])

    def export(self, tensors: dict[str, Tensor]) -> dict[str, Tensor]:
        """Per-probe CPU tensors `[P, ...]` in probe order, weights as `[P, in, out]`."""
        out = {}
        for name, t in tensors.items():
            flat = self.probe_order(t).cpu()
            out[name] = (flat.transpose(1, 2) if flat.ndim == 3 else flat).contiguous()
        return out

    @staticmethod
    def units(t: Tensor, block: Block) -> Tensor:
        """A training-layout tensor's block (mask, units) as `[unit, variant, ...]` (a view:
        `[outer, inner]` flattened, then the block's range)."""
        m, units = block
        return t[m].flatten(0, 1)[units]

    @staticmethod
    def fused(t: Tensor, block: Block) -> Tensor:
        """A block as `[unit, variant * out, ...]` (a view: the variants stacked along the
        output)."""
        t = BatchedProbes.units(t, block)
        return t.view(t.shape[0], t.shape[1] * t.shape[2], *t.shape[3:])

    @staticmethod
    def per_probe(t: Tensor, block: Block) -> Tensor:
        """A block as `[unit * variant, out, ...]` (a view)."""
        t = BatchedProbes.units(t, block)
        return t.view(t.shape[0] * t.shape[1], *t.shape[2:])

    def forward(
        self, block: Block, x: Float[Tensor, "group batch dim"]
    ) -> tuple[Tensor, list[Tensor]]:
        """Training logits `[unit, variant * out, batch]` of a block from its inputs
        `[unit, batch, dim]`, and what `backward` needs."""
        raise NotImplementedError

    def backward(self, block: Block, x: Tensor, cache: list[Tensor], dlogits: Tensor) -> None:
        """Write the gradients of a block into `self.grads`."""
        raise NotImplementedError

    def eval_weights(self, tensors: dict[str, Tensor]) -> list[Tensor]:
        """`tensors` (`params` or `best`) arranged for `logits`, once per evaluation (a copy: it
        used to be made for every chunk of items, 3.4 MB for the UPOS-sized grid)."""
        raise NotImplementedError

    def logits(
        self, weights: list[Tensor], xs: Float[Tensor, "site item dim"]
    ) -> Float[Tensor, "site item site_probe out"]:
        """Evaluation logits (no dropout) of every probe on items `xs` (all grid sites) under
        `eval_weights(...)`, in the site-major layout of one GEMM per site
        (`ProbeLayout.from_site_major` gives `[P, ...]`)."""
        raise NotImplementedError

    @staticmethod
    def stored_logits(
        weights: dict[str, Tensor], x: Float[Tensor, "item dim"]
    ) -> Float[Tensor, "probe item out"]:
        """Outputs of probes stored as `export` writes them (`ProbeResults.weights`: every
        weight `[P, in, out]`), all reading the same inputs `x`: the kind's evaluation forward
        pass on one group of probes."""
        raise NotImplementedError


def per_site(w: Tensor) -> Tensor:
    """`[mask, site, seed, variant, out, *in]` -> `[site, *in, mask*seed*variant*out]`."""
    t = w.shape[1]
    moved = w.permute(1, *range(5, w.ndim), 0, 2, 3, 4)
    return moved.reshape(t, *w.shape[5:], -1)
