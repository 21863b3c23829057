"""nnsight backend: any Hugging Face model, sites read through `NNsight(model).trace(...)`.

Each requested site is pooled inside the trace as soon as its module has run, so the only per-token
tensor kept is the one being pooled; the trace stops after the last requested site. Head sites
are read at the input of each block's attention output projection (`internals.heads`), pooled
once per layer for all its heads.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Sequence
from typing import Any

import nnsight
import torch
from torch import Tensor, nn

from internals.backends.base import ModelBatch
from internals.heads import PartHeads, find_heads, head_columns
from internals.layout import ModelLayout
from internals.placement import input_device
from internals.pool import PoolHow, pool_spans
from internals.sae_sites import pool_site
from internals.sites import HEAD, Site


class PlacedNNsight(nnsight.NNsight):
    """`NNsight` that sends inputs where the model's input embeddings run.

    nnsight moves inputs to the device of the model's first parameter, which is `meta` when that
    parameter is offloaded to disk by accelerate; the embeddings' execution device is the right one.
    """

    @property
    def device(self) -> torch.device | None:
        """The device inputs belong on (see `internals.placement.input_device`)."""
        return input_device(self._module)


class SightBackend:
    """Reads `hidden_states[k]`-equivalent sites, and attention heads, with nnsight."""

    name = "nnsight"

    def __init__(self, model: nn.Module, layout: ModelLayout) -> None:
        self.layout = layout
        self.heads: dict[str, PartHeads] = find_heads(model, layout)
        self.streams: tuple[str, ...] = (HEAD,) if self.heads else ()
        with warnings.catch_warnings():  # HF modules named `output` are renamed by nnsight; fine
            warnings.simplefilter("ignore", UserWarning)
            self.envoy = PlacedNNsight(model)
        self._order = {part: i for i, part in enumerate(layout.parts)}

    def _module(self, path: str) -> Any:
        envoy: Any = self.envoy
        for part in path.split("."):
            if part.isdigit():
                envoy = envoy[int(part)]
            elif inspect.isdatadescriptor(getattr(type(envoy), part, None)):
                # a module named like an envoy property (BERT's `output`) is served renamed
                envoy = getattr(envoy, f"{envoy.OVERLOAD_PREFIX}{part}")
            else:
                envoy = getattr(envoy, part)
        return envoy

    def _read(self, site: Site) -> Tensor:
        part = self.layout.parts[site.part]
        layers = self._module(part.layers)
        if site.stream == HEAD:  # the heads' outputs side by side, before they are mixed
            projection = self.heads[site.part].projection
            return self._module(f"{part.layers}.{site.layer - 1}.{projection}").input
        if site.layer == 0:
            return layers[0].input
        if site.layer == part.n_layers and part.final_norm is not None:
            return self._module(part.final_norm).output
        value = layers[site.layer - 1].output
        return value[0] if isinstance(value, tuple | list) else value

    def pooled(self, batch: ModelBatch, sites: Sequence[Site], how: PoolHow) -> dict[Site, Tensor]:
        """Pool every site inside one trace, in forward order, then stop the model."""
        # a block's heads run before its output (the resid_post site of the same layer)
        reads: dict[Site, list[Site]] = {}
        for site in sites:
            read = Site(site.part, site.layer, HEAD, head=0) if site.stream == HEAD else site
            reads.setdefault(read, []).append(site)
        ordered = sorted(reads, key=lambda s: (self._order[s.part], s.layer, s.stream != HEAD))
        saved: dict[Site, Tensor] = {}
        with torch.no_grad(), self.envoy.trace(**batch.inputs) as tracer:
            for read in ordered:
                hidden = self._read(read)
                segments = batch.segments[read.part]
                if read.stream != HEAD:  # one site; an SAE site pools its own latents
                    for site in reads[read]:
                        saved[site] = nnsight.save(pool_site(site, hidden, segments, how))
                    continue
                pooled = pool_spans(hidden, segments, how)
                head_dim = self.heads[read.part].head_dim
                for site in reads[read]:
                    assert site.head is not None
                    saved[site] = nnsight.save(head_columns(pooled, site.head, head_dim))
            tracer.stop()
        return saved
