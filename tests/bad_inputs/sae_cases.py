"""Bad inputs of SAE sites (`sites.sae`) and of sparse (L1) logistic probes."""

from __future__ import annotations

import torch
from torch import nn

from internals import Site, SiteError, SpanItem, sites
from probes import ProbeInputError, fit_logistic_regression
from tests.bad_inputs.case import Case, Env

GOOD = SpanItem("The cat sat.", spans=((4, 7),))


class ZeroSae(nn.Module):
    """An SAE-shaped module (`W_enc [d_in, d_sae]`, `encode`) with zero weights."""

    def __init__(self, d_in: int, d_sae: int) -> None:
        super().__init__()
        self.W_enc = nn.Parameter(torch.zeros(d_in, d_sae))

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ self.W_enc)


class NoWidth(nn.Module):
    """Has `encode`, but nothing that says its input width."""

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return x


def sae_features(env: Env, chosen: list) -> torch.Tensor:
    return env.bert.features([GOOD], chosen, progress=False)


def _edited_after(env: Env) -> None:
    sae = ZeroSae(64, 8)
    site = sites.sae("encoder.1", sae)
    with torch.no_grad():
        sae.W_enc.fill_(1.0)
    sae_features(env, [site])


SAE = [
    Case(
        "sae-no-encode",
        'sites.sae("encoder.1", nn.Identity())',
        "SiteError: not an SAE; give a module with encode",
        lambda env: sites.sae("encoder.1", nn.Identity()),
        SiteError,
        r"Identity is not an SAE; give a SAELens SAE or a torch\.nn\.Module with encode",
    ),
    Case(
        "sae-unknown-width",
        "sites.sae(site, module) whose input width nothing states",
        "SiteError: give it a d_in attribute",
        lambda env: sites.sae("encoder.1", NoWidth()),
        SiteError,
        r"cannot tell the input width of NoWidth; give it a `d_in` attribute",
    ),
    Case(
        "sae-width-mismatch",
        "an SAE of d_in=32 at a site of width 64",
        "SiteError: the SAE reads width 32, the site has 64",
        lambda env: sae_features(env, [sites.sae("encoder.1", ZeroSae(32, 8))]),
        SiteError,
        r"SAE reads vectors of width d_in=32 but this site's activations have width 64",
    ),
    Case(
        "sae-mixed-widths",
        "an SAE site and a plain site in one call",
        "SiteError: widths differ; separate calls",
        lambda env: sae_features(env, [Site("encoder", 1), sites.sae("encoder.1", ZeroSae(64, 8))]),
        SiteError,
        r"sites encoder\.1 \(64 wide\) and encoder\.1\.sae-\w+ \(8 wide\) differ in width",
    ),
    Case(
        "sae-edited-after",
        "SAE weights edited after sites.sae made the site",
        "SiteError: call sites.sae again (never stale stored latents)",
        _edited_after,
        SiteError,
        r"the SAE's weights changed after sites\.sae\(\.\.\.\) made this site",
    ),
    Case(
        "logistic-penalty-unknown",
        'fit_logistic_regression(X, y, penalty="l3")',
        "ProbeInputError: choose 'l2' or 'l1'",
        lambda env: fit_logistic_regression(
            torch.ones(1, 4, 2), torch.tensor([[0, 1, 0, 1]]), penalty="l3"
        ),
        ProbeInputError,
        r"penalty='l3': choose 'l2' \(default\) or 'l1'",
        typed=True,
    ),
    Case(
        "logistic-l1-c-zero",
        'fit_logistic_regression(X, y, C=0, penalty="l1")',
        "ProbeInputError: C must be > 0",
        lambda env: fit_logistic_regression(
            torch.ones(1, 4, 2), torch.tensor([[0, 1, 0, 1]]), 0.0, penalty="l1"
        ),
        ProbeInputError,
        r"C=0\.0: the inverse regularisation strength must be > 0",
    ),
]
