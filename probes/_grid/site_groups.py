"""The grid trainer on a `FeatureSet` under a memory budget: one group of sites at a time.

Each group of sites (`probes._grid.memory_budget.plan_sites`) is read once, trained to the end as a
grid of its own and released, while the next group is read in the background
(`probes._grid.site_reader`); the groups' results are then put together in the order of the whole
grid. A probe draws the same numbers in any grid (`probes._grid.streams`: every stream is keyed by
the probe's seed, mask and order key, never by its site or the grid's size; the initialisation
is drawn once per seed for every site), its block's GEMMs and its site's evaluation GEMM do not
depend on the other sites, so the results equal the one fit of every site: bit for bit, but
for fused AdamW, which steps a tensor's last elements (fewer than a vector's width) one by one
and may round them a last bit differently from the same elements in vector lanes, so a group
of fewer probes can differ from the whole grid by one float32 unit in the last place.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

import polars as pl
import torch
from torch import Tensor

from lingprobe.feature_set import FeatureSet
from probes._grid.memory_budget import log_site_groups, plan_sites
from probes._grid.site_reader import item_major_reader, site_groups
from probes.config import TrainConfig
from probes.grid import ProbeGrid, ProbeLayout
from probes.predictions import TestPredictions
from probes.results import ProbeResults

log = logging.getLogger(__name__)
TensorFit = Callable[[Tensor, ProbeGrid, TrainConfig], ProbeResults]


def fit_in_site_groups(
    features: FeatureSet,
    grid: ProbeGrid,
    config: TrainConfig,
    budget: int | None,
    fit: TensorFit,
    device: torch.device,
) -> ProbeResults | None:
    """`fit(x, grid, config)` of each group of the grid's sites (x: the group's features, the
    grid's sites then 0..g-1, read for `device`: on a CUDA device x is there already, copied
    from pinned host memory while the group before trained), merged into the results of one
    grid; None where a single site does not fit `budget` (the caller streams item blocks
    instead)."""
    n_items, n_sites, dim = features.shape
    layout = grid.layout(n_sites)
    held = held_dtype(features.dtype, config)
    site_bytes = n_items * dim * held.itemsize
    plan = plan_sites(len(layout.sites), site_bytes, budget)
    if plan.streamed:
        return None
    log_site_groups(log, "fit_probes", plan, site_bytes, budget)
    group_grid = replace(grid, sites=None)
    group_config = replace(config, memory=None)
    parts = []
    read = item_major_reader(features, layout.sites, held, device)
    for group, x in site_groups(read, plan.groups, plan.prefetch):
        parts.append((group[0], fit(x, group_grid, group_config)))
        del x  # released before the group after the next is read
    return merge_site_groups(parts, layout)


def held_dtype(stored: torch.dtype, config: TrainConfig) -> torch.dtype:
    """The dtype a group is held in: the stored float16 or bfloat16 (half the bytes of float32;
    the trainer computes on their float32 values, the same numbers) when the training GEMMs run
    in float32, else float32."""
    if config.compute == "float32" and stored in (torch.float16, torch.bfloat16):
        return stored
    return torch.float32


def merge_site_groups(parts: list[tuple[int, ProbeResults]], layout: ProbeLayout) -> ProbeResults:
    """One grid's results from the results of its site groups (`(first site position,
    results)`, each a grid of sites 0..g-1 at positions first..first+g-1 of `layout.sites`; one
    group of every site too): probes renumbered in the grid's order (mask, seed, site,
    variant), sites given their indices."""
    n_masks, n_seeds, n_sites, n_variants = layout.shape
    every = torch.arange(layout.n_probes).view(n_masks, n_seeds, n_sites, n_variants)
    first_results = parts[0][1]
    probes, metrics, codes = [], [], []
    weights: dict[str, Tensor] = {}
    pred, target_row, scores = None, None, None
    for offset, res in parts:
        width = res.probes["site"].n_unique()
        ids = every[:, :, offset : offset + width].reshape(-1)
        sites = [layout.sites[offset + j] for j in res.probes["site"].to_list()]
        probes.append(res.probes.with_columns(probe=pl.Series(ids.tolist()), site=pl.Series(sites)))
        local = torch.from_numpy(res.metrics["probe"].to_numpy())
        metrics.append(res.metrics.with_columns(probe=pl.Series(ids[local].numpy())))
        for name, tensor in res.weights.items():
            weights.setdefault(name, torch.empty(layout.n_probes, *tensor.shape[1:]))[ids] = tensor
        if res.codelengths is not None:
            site = pl.Series([layout.sites[offset + j] for j in res.codelengths["site"].to_list()])
            codes.append(res.codelengths.with_columns(site=site))
        if res.test is not None:
            if pred is None:
                pred = res.test.pred.new_empty(layout.n_probes, *res.test.pred.shape[1:])
                target_row = res.test.target_row.new_empty(layout.n_probes)
                if res.test.scores is not None:  # the rank metrics' class scores
                    shape = res.test.scores.shape[1:]
                    scores = res.test.scores.new_empty(layout.n_probes, *shape)
            pred[ids], target_row[ids] = res.test.pred, res.test.target_row  # type: ignore[index]
            if scores is not None and res.test.scores is not None:
                scores[ids] = res.test.scores
    order = first_results.metrics.select("split", "metric").unique(maintain_order=True)
    ranked = pl.concat(metrics).join(order.with_row_index("rank"), on=["split", "metric"])
    test = first_results.test
    if test is not None and pred is not None and target_row is not None:
        test = TestPredictions(
            test.items, pred, test.targets, target_row, test.head, test.outputs, scores
        )
    return ProbeResults(
        probes=pl.concat(probes).sort("probe"),
        metrics=ranked.sort("rank", "probe").drop("rank"),
        weights=weights,
        codelengths=_merged_codelengths(codes, layout),
        kind=first_results.kind,
        head=first_results.head,
        test=test,
        site_names=first_results.site_names,
        mask_kind=first_results.mask_kind,
    )


def _merged_codelengths(frames: list[pl.DataFrame], layout: ProbeLayout) -> pl.DataFrame | None:
    """The groups' codelength rows in the grid's order: seed, then site, then variant."""
    if not frames:
        return None
    seed_rank = {s: i for i, s in enumerate(layout.seeds)}
    variant_rank = {v: i for i, v in enumerate(layout.variants)}
    site_rank = {s: i for i, s in enumerate(layout.sites)}
    merged = pl.concat(frames)
    keys = merged.select(
        seed_rank=pl.col("seed").replace_strict(seed_rank),
        site_rank=pl.col("site").replace_strict(site_rank),
        variant_rank=pl.col("variant").replace_strict(variant_rank),
    )
    return (
        pl.concat([merged, keys], how="horizontal")
        .sort("seed_rank", "site_rank", "variant_rank")
        .drop("seed_rank", "site_rank", "variant_rank")
    )
