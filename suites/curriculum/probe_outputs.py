"""Per-item class probabilities of trained probes (PVI and the cross-distribution matrix need
them on held-out items), and metrics over any subset of items."""

from __future__ import annotations

import torch
from jaxtyping import Float, Int
from torch import Tensor

from probes import ProbeResults, classification_metrics


def probe_probabilities(
    results: ProbeResults, feats: Float[Tensor, "item site dim"]
) -> Float[Tensor, "probe item class"]:
    """Softmax class probabilities (float64) of every probe on `feats` (the features' site
    axis must be the one the probes were trained on)."""
    return torch.softmax(results.logits(feats).double(), dim=-1)


def subset_metrics(
    probs: Float[Tensor, "probe item class"],
    gold: Int[Tensor, " item"],
    include: Tensor,
) -> dict[str, Float[Tensor, " probe"]]:
    """accuracy, macro-F1, micro-F1 and MCC of every probe over the included items."""
    pred = probs.argmax(dim=-1)
    keep = include.bool()[None].expand(pred.shape[0], -1)
    return classification_metrics(pred, gold[None].expand_as(pred), probs.shape[-1], keep)
