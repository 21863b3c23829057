"""nnsight backend: any Hugging Face model, sites read through `NNsight(model).trace(...)`.

Each requested site is pooled inside the trace as soon as its module has run, so the only per-token
tensor kept is the one being pooled; the trace stops after the last requested site.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import nnsight
import torch
from torch import Tensor, nn

from internals.backends.base import ModelBatch
from internals.layout import ModelLayout
from internals.placement import input_device
from internals.pool import PoolHow
from internals.sae_sites import pool_site
from internals.sites import Site


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
    """Reads `hidden_states[k]`-equivalent sites with nnsight on any HF model."""

    name = "nnsight"
    streams: tuple[str, ...] = ()

    def __init__(self, model: nn.Module, layout: ModelLayout) -> None:
        self.layout = layout
        with warnings.catch_warnings():  # HF modules named `output` are renamed by nnsight; fine
            warnings.simplefilter("ignore", UserWarning)
            self.envoy = PlacedNNsight(model)
        self._order = {part: i for i, part in enumerate(layout.parts)}

    def _module(self, path: str) -> Any:
        envoy: Any = self.envoy
        for part in path.split("."):
            envoy = envoy[int(part)] if part.isdigit() else getattr(envoy, part)
        return envoy

    def _read(self, site: Site) -> Tensor:
        part = self.layout.parts[site.part]
        layers = self._module(part.layers)
        if site.layer == 0:
            return layers[0].input
        if site.layer == part.n_layers and part.final_norm is not None:
            return self._module(part.final_norm).output
        value = layers[site.layer - 1].output
        return value[0] if isinstance(value, tuple | list) else value

    def pooled(self, batch: ModelBatch, sites: Sequence[Site], how: PoolHow) -> dict[Site, Tensor]:
        """Pool every site inside one trace, in forward order, then stop the model."""
        ordered = sorted(sites, key=lambda s: (self._order[s.part], s.layer))
        saved: dict[Site, Tensor] = {}
        with torch.no_grad(), self.envoy.trace(**batch.inputs) as tracer:
            for site in ordered:
                hidden = self._read(site)
                saved[site] = nnsight.save(pool_site(site, hidden, batch.segments[site.part], how))
            tracer.stop()
        return saved
