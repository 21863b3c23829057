"""Per-item class probabilities of trained probes (PVI and the cross-distribution matrix need
them on held-out items), and metrics over any subset of items.

Features on disk (a `FeatureSet`) are scored by groups of sites within a memory budget: each
group's held-out rows are read once and scored by the probes of those sites only (rows in
blocks where one site's rows do not fit), with the same per-site forward pass as in memory.
"""

from __future__ import annotations

import logging
from dataclasses import replace

import polars as pl
import torch
from jaxtyping import Float, Int
from torch import Tensor

from internals import FeatureSet
from probes import ProbeResults, classification_metrics

log = logging.getLogger(__name__)


def probe_probabilities(
    results: ProbeResults, feats: Float[Tensor, "item site dim"]
) -> Float[Tensor, "probe item class"]:
    """Softmax class probabilities (float64) of every probe on `feats` (the features' site
    axis must be the one the probes were trained on)."""
    return torch.softmax(results.logits(feats).double(), dim=-1)


def held_out_probabilities(
    results: ProbeResults,
    feats: Float[Tensor, "item site dim"] | FeatureSet,
    rows: Int[Tensor, " row"],
    memory: int | None = None,
) -> Float[Tensor, "probe row class"]:
    """`probe_probabilities` of every probe on the items `rows` of `feats`; a `FeatureSet` is
    read by groups of sites holding at most `memory` bytes of float32 features (None: all)."""
    if isinstance(feats, Tensor):
        return probe_probabilities(results, feats[rows])
    _, n_sites, width = feats.shape
    row_bytes = width * 4
    site_bytes = max(1, len(rows) * row_bytes)
    per_group = n_sites if memory is None else max(1, min(n_sites, memory // site_bytes))
    block = max(1, len(rows) if memory is None else min(len(rows), memory // row_bytes))
    if per_group < n_sites or block < len(rows):
        log.info(
            "scoring %d rows at %d sites in groups of %d sites, %d rows at once, under memory=%d",
            len(rows), n_sites, per_group, block, memory,
        )  # fmt: skip
    ordered = results.probes.sort("probe")
    classes = results.weights["intercept"].shape[-1]
    out = torch.empty(ordered.height, len(rows), classes, dtype=torch.float64)
    for first in range(0, n_sites, per_group):
        group = list(range(first, min(first + per_group, n_sites)))
        chosen = ordered.filter(pl.col("site").is_in(group))
        ids = torch.tensor(chosen["probe"].to_list(), dtype=torch.long)
        local = chosen.with_columns(
            probe=pl.int_range(pl.len(), dtype=pl.Int64),
            site=pl.col("site") - first,  # the group's sites are consecutive
        )
        weights = {name: w[ids] for name, w in results.weights.items()}
        part = replace(results, probes=local, weights=weights, test=None)
        for start in range(0, len(rows), block):
            x = feats.read(sites=group, items=rows[start : start + block])
            out[ids, start : start + x.shape[0]] = probe_probabilities(part, x)
            del x
    return out


def subset_metrics(
    probs: Float[Tensor, "probe item class"],
    gold: Int[Tensor, " item"],
    include: Tensor,
) -> dict[str, Float[Tensor, " probe"]]:
    """accuracy, macro-F1, micro-F1 and MCC of every probe over the included items."""
    pred = probs.argmax(dim=-1)
    keep = include.bool()[None].expand(pred.shape[0], -1)
    return classification_metrics(pred, gold[None].expand_as(pred), probs.shape[-1], keep)
