"""transformer-lens backend: `TransformerBridge` hooks (`blocks.{i}.hook_resid_post`, ...).

The bridge wraps (and mutates) the HF model it is given, so the subject hands it a model instance
of its own. Every requested hook pools its tensor as it fires; after the last one a `StopForward`
ends the pass, so a BERT bridge never pays for the MLM head it always carries. Besides
`resid_post` this backend reads the streams `resid_mid`, `attn_out` and `mlp_out` (layers >= 1),
and head sites from `blocks.{i}.attn.hook_z` (`[batch, token, head, head_dim]`, the input of the
attention's output projection), pooled once per layer for all its heads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor, nn

from internals.backends.base import ModelBatch, StopForward
from internals.errors import SiteError
from internals.heads import PartHeads, head_columns
from internals.layout import ModelLayout
from internals.pool import PoolHow, pool_spans
from internals.sae_sites import pool_site
from internals.sites import HEAD, RESID_POST, Site

LENS_STREAMS = ("resid_mid", "attn_out", "mlp_out", HEAD)


def boot_bridge(name: str, model: nn.Module, tokenizer: Any) -> Any:
    """`TransformerBridge.boot_transformers` on an already-loaded model (works offline)."""
    from transformer_lens.model_bridge import TransformerBridge

    bridge = TransformerBridge.boot_transformers(name, hf_model=model, tokenizer=tokenizer)
    bridge.eval()
    return bridge


class LensBackend:
    """Reads sites through transformer-lens hook points."""

    name = "lens"
    streams: tuple[str, ...] = LENS_STREAMS

    def __init__(self, bridge: Any, layout: ModelLayout, heads: dict[str, PartHeads]) -> None:
        if layout.kind == "encoder-decoder":
            raise SiteError(
                "backend='lens' reads encoder-only and decoder-only models; use nnsight"
            )
        self.bridge = bridge
        self.part, self.layout = next(iter(layout.parts.items()))
        self.heads = {self.part: heads[self.part]} if self.part in heads else {}
        self.streams = LENS_STREAMS if self.heads else LENS_STREAMS[:-1]

    def hook_name(self, site: Site) -> str:
        """The bridge hook that holds `site` (HF `hidden_states` numbering for resid_post)."""
        n = self.layout.n_layers
        if site.stream == HEAD:
            return f"blocks.{site.layer - 1}.attn.hook_z"
        if site.stream != RESID_POST:
            if site.layer == 0:
                raise SiteError(f"site {site.name}: stream {site.stream} exists for layers 1..{n}")
            return f"blocks.{site.layer - 1}.hook_{site.stream}"
        if site.layer == 0:
            return "blocks.0.hook_resid_pre"
        if site.layer == n and self.layout.final_norm is not None:
            return "ln_final.hook_out"
        return f"blocks.{site.layer - 1}.hook_resid_post"

    def pooled(self, batch: ModelBatch, sites: Sequence[Site], how: PoolHow) -> dict[Site, Tensor]:
        """One bridge forward with a pooling hook per site; stops after the last one fires."""
        segments = batch.segments[self.part]
        saved: dict[Site, Tensor] = {}
        by_hook: dict[str, list[Site]] = {}
        for site in sites:
            by_hook.setdefault(self.hook_name(site), []).append(site)

        def make_hook(group: list[Site]):
            def hook(tensor: Tensor, hook: Any) -> None:
                if group[0].stream == HEAD:  # [batch, token, head, head_dim], heads side by side
                    pooled = pool_spans(tensor.flatten(2), segments, how)
                    width = self.heads[self.part].head_dim
                    for site in group:
                        assert site.head is not None
                        saved[site] = head_columns(pooled, site.head, width)
                else:
                    for site in group:  # an SAE site of this hook pools its own latents
                        saved[site] = pool_site(site, tensor, segments, how)
                if len(saved) == len(sites):
                    raise StopForward

            return hook

        inputs = dict(batch.inputs)
        input_ids = inputs.pop("input_ids")
        hooks = [(name, make_hook(group)) for name, group in by_hook.items()]
        try:
            with torch.no_grad():
                self.bridge.run_with_hooks(input_ids, fwd_hooks=hooks, return_type=None, **inputs)
        except StopForward:
            pass
        missing = [s.name for s in sites if s not in saved]
        if missing:
            raise SiteError(f"transformer-lens never fired the hooks for sites {missing}")
        return saved
