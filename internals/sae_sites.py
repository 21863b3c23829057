"""Sparse-autoencoder sites: a site's activations encoded by an SAE, then pooled like any site.

`sites.sae(site, sae)` wraps an SAE (a SAELens `SAE`, or any `torch.nn.Module` with
`encode(x [..., d_in]) -> [..., d_sae]`) as an `SaeEncoder`: the module, its input and latent
widths, and a digest of every weight and buffer. The digest is part of the site's name, so the
activation store keeps the latents of each SAE apart, and it is checked again at every
extraction: an SAE edited after `sites.sae` was called is refused, never served stale latents.

The order is the one SAELens users follow: every token's activation is encoded first and the
latents are pooled after (mean, first, last or max over the span's tokens). An SAE encoder is
nonlinear (ReLU, JumpReLU, TopK), so encoding a pooled vector gives other latents than pooling
encoded tokens, and the SAE was trained on single-token activations, not on averages.

This module knows SAEs and tensors only; `internals.sites` builds the site (`SaeSite`) from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from jaxtyping import Float
from torch import Tensor, nn

from internals.content_hash import module_digest
from internals.errors import SiteError
from internals.pool import PoolHow, TokenSegments, pool_spans

KEY_CHARS = 16  # hex characters of the SAE's weight digest kept in the site name


@dataclass(frozen=True, eq=False)
class SaeEncoder:
    """An SAE as a site reads it: the module, its widths and the digest of its weights."""

    module: nn.Module
    d_in: int
    d_sae: int
    key: str

    def encode(
        self, hidden: Float[Tensor, "*batch dim"], where: str
    ) -> Float[Tensor, "*batch latent"]:
        """Latents of every token (on the SAE's device and dtype), without gradients."""
        if hidden.shape[-1] != self.d_in:
            raise SiteError(
                f"site {where}: the SAE reads vectors of width d_in={self.d_in} but this site's"
                f" activations have width {hidden.shape[-1]}; give the SAE trained on this"
                " site's model and stream"
            )
        reference = next(iter(self.module.parameters()), None)
        if reference is not None:
            hidden = hidden.to(reference.device, reference.dtype)
        with torch.no_grad():
            latents = self.module.encode(hidden)  # type: ignore[operator]
        if not isinstance(latents, Tensor) or latents.shape != (*hidden.shape[:-1], self.d_sae):
            got = tuple(latents.shape) if isinstance(latents, Tensor) else type(latents).__name__
            raise SiteError(
                f"site {where}: the SAE's encode returned {got} for input"
                f" {tuple(hidden.shape)}; it must return one row of {self.d_sae} latents per"
                " input row"
            )
        return latents

    def check_unchanged(self, where: str) -> None:
        """Refuse an SAE whose weights changed since its site was made (its store key is stale)."""
        if module_digest(self.module) != self.key:
            raise SiteError(
                f"site {where}: the SAE's weights changed after sites.sae(...) made this site, so"
                " its name no longer identifies them; call sites.sae(site, sae) again"
            )


def sae_encoder(module: object) -> SaeEncoder:
    """Check an SAE and measure it: `encode` present, `d_in` known, `d_sae` from one call."""
    encode = getattr(module, "encode", None)
    if not isinstance(module, nn.Module) or not callable(encode):
        raise SiteError(
            f"sites.sae: {type(module).__name__} is not an SAE; give a SAELens SAE or a"
            " torch.nn.Module with encode(x [..., d_in]) -> latents [..., d_sae]"
        )
    d_in = _input_width(module)
    reference = next(iter(module.parameters()), None)
    probe = torch.zeros(1, d_in)
    if reference is not None:
        probe = probe.to(reference.device, reference.dtype)
    with torch.no_grad():
        latents = encode(probe)
    if not isinstance(latents, Tensor) or latents.ndim != 2 or latents.shape[0] != 1:
        got = tuple(latents.shape) if isinstance(latents, Tensor) else type(latents).__name__
        raise SiteError(
            f"sites.sae: {type(module).__name__}.encode returned {got} for one input row of"
            f" width {d_in}; it must return one row of latents per input row"
        )
    return SaeEncoder(module, d_in, int(latents.shape[1]), module_digest(module))


def _input_width(module: nn.Module) -> int:
    """`d_in` from SAELens' `cfg.d_in`, a `d_in` attribute, `W_enc [d_in, d_sae]` or an
    `encoder` `nn.Linear`."""
    cfg: Any = getattr(module, "cfg", None)
    for value in (getattr(cfg, "d_in", None), getattr(module, "d_in", None)):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    w_enc = getattr(module, "W_enc", None)
    if isinstance(w_enc, Tensor) and w_enc.ndim == 2:
        return int(w_enc.shape[0])
    encoder = getattr(module, "encoder", None)
    if isinstance(encoder, nn.Linear):
        return encoder.in_features
    raise SiteError(
        f"sites.sae: cannot tell the input width of {type(module).__name__}; give it a `d_in`"
        " attribute (SAELens SAEs have cfg.d_in), a W_enc [d_in, d_sae] parameter, or an"
        " `encoder` nn.Linear"
    )


def encoder_of(site: object) -> SaeEncoder | None:
    """The SAE a site reads through (None for a plain site)."""
    value = getattr(site, "sae", None)
    return value if isinstance(value, SaeEncoder) else None


def pool_site(
    site: object,
    hidden: Float[Tensor, "batch token dim"],
    segments: TokenSegments,
    how: PoolHow,
) -> Float[Tensor, "segment width"]:
    """The pooled rows of one site: the activations themselves, or an SAE site's latents of
    every token pooled after encoding."""
    encoder = encoder_of(site)
    if encoder is None:
        return pool_spans(hidden, segments, how)
    return pool_spans(encoder.encode(hidden, str(site)), segments, how)
