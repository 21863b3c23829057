"""One-hidden-layer MLP probes, batched: `relu(x @ hidden_weight + hidden_bias) @ coef +
intercept` for every probe of a grid.

The layouts are `probes.batched_probes`'s. Evaluation and stored results share one forward
pass: `hidden_outputs` (one GEMM per group of probes that read the same inputs, a site's probes,
their first layers side by side), then each probe's output layer as one batched matmul.
"""

from __future__ import annotations

import torch
from jaxtyping import Float
from torch import Tensor

from probes._grid.blocks import Block
from probes.batched_probes import BatchedProbes, ParamSpec, per_site
from probes.grid import ProbeLayout


def hidden_outputs(
    xs: Float[Tensor, "site item dim"],
    weight: Float[Tensor, "site dim probe_out"],
    bias: Float[Tensor, "site probe_out"],
) -> Float[Tensor, "site item probe_out"]:
    """`relu(xs @ weight + bias)` per site (columns: probe * hidden)."""
    return torch.baddbmm(bias[:, None], xs, weight).relu_()


class MLPProbes(BatchedProbes):
    """One-hidden-layer MLP probes: `relu(x @ hidden_weight + hidden_bias) @ coef + intercept`."""

    def __init__(
        self, layout: ProbeLayout, dim: int, out: int, hidden: int, seeds_outer: bool = False
    ) -> None:
        self.specs = {
            "hidden_weight": ParamSpec((hidden, dim), dim),
            "hidden_bias": ParamSpec((hidden,), dim),
            "coef": ParamSpec((out, hidden), hidden),
            "intercept": ParamSpec((out,), hidden),
        }
        self.hidden = hidden
        super().__init__(layout, seeds_outer)

    def forward(
        self, block: Block, x: Float[Tensor, "group batch dim"]
    ) -> tuple[Tensor, list[Tensor]]:
        p = self.params
        w1, b1 = self.fused(p["hidden_weight"], block), self.fused(p["hidden_bias"], block)
        if x.dtype != w1.dtype:
            hid = torch.bmm(w1.to(x.dtype), x.transpose(1, 2)).float().add_(b1[..., None])
        else:
            hid = torch.baddbmm(b1[..., None], w1, x.transpose(1, 2))
        hid = hid.relu_()
        hid = hid.view(-1, self.hidden, x.shape[1])  # [unit * V, H, batch]
        w2, b2 = self.per_probe(p["coef"], block), self.per_probe(p["intercept"], block)
        out = torch.baddbmm(b2[..., None], w2, hid)  # [unit * V, C, batch]
        return out.view(x.shape[0], -1, x.shape[1]), [hid]

    def backward(self, block: Block, x: Tensor, cache: list[Tensor], dlogits: Tensor) -> None:
        (hid,), grads = cache, self.grads
        dout = dlogits.view(hid.shape[0], -1, x.shape[1])  # [unit * V, C, batch]
        torch.bmm(dout, hid.transpose(1, 2), out=self.per_probe(grads["coef"], block))
        torch.sum(dout, dim=2, out=self.per_probe(grads["intercept"], block))
        w2 = self.per_probe(self.params["coef"], block)
        dhid = torch.bmm(w2.transpose(1, 2), dout).mul_(hid > 0)  # [unit * V, H, batch]
        dhid = dhid.view(x.shape[0], -1, x.shape[1])  # [unit, V * H, batch]
        grad_w1 = self.fused(grads["hidden_weight"], block)
        if x.dtype != grad_w1.dtype:
            grad_w1.copy_(torch.bmm(dhid.to(x.dtype), x))
        else:
            torch.bmm(dhid, x, out=grad_w1)
        torch.sum(dhid, dim=2, out=self.fused(grads["hidden_bias"], block))

    def eval_weights(self, tensors: dict[str, Tensor]) -> list[Tensor]:
        first = [per_site(self.sites_outer(tensors[n])) for n in ("hidden_weight", "hidden_bias")]
        w2 = self.probe_order(tensors["coef"]).transpose(1, 2)
        return [*first, w2, self.probe_order(tensors["intercept"])[:, None]]

    def logits(
        self, weights: list[Tensor], xs: Float[Tensor, "site item dim"]
    ) -> Float[Tensor, "site item site_probe out"]:
        w1, b1, w2, b2 = weights
        hid = hidden_outputs(xs, w1, b1)
        hid = self.layout.from_site_major(hid.view(*hid.shape[:2], -1, self.hidden))
        return self.layout.to_site_major(torch.baddbmm(b2, hid, w2))

    @staticmethod
    def stored_logits(
        weights: dict[str, Tensor], x: Float[Tensor, "item dim"]
    ) -> Float[Tensor, "probe item out"]:
        w1 = weights["hidden_weight"]  # [probe, dim, hidden]
        p, d, h = w1.shape
        columns = w1.permute(1, 0, 2).reshape(1, d, p * h)
        hid = hidden_outputs(x[None], columns, weights["hidden_bias"].reshape(1, p * h))
        hid = hid.view(-1, p, h).transpose(0, 1)  # [probe, item, hidden]
        return torch.baddbmm(weights["intercept"][:, None], hid, weights["coef"])
