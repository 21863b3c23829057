"""`fit_probes` on a `FeatureSet`: features read from disk under `TrainConfig.memory`.

Site groups where one site fits the budget (`probes._grid.site_groups`), item blocks streamed where
not (`probes.streamed_sweep`). The results equal `fit_probes` of the same features as a tensor.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from torch import Tensor

from lingprobe.feature_set import FeatureSet
from probes._grid.inputs import check_site_names, resolve_device
from probes._grid.item_stream import ItemStream
from probes._grid.memory_budget import format_bytes
from probes._grid.site_groups import fit_in_site_groups, held_dtype, merge_site_groups
from probes.config import TrainConfig
from probes.grid import ProbeGrid
from probes.results import ProbeResults

log = logging.getLogger(__name__)


def fit_feature_set(
    features: FeatureSet,
    targets: Any,
    splits: Any,
    grid: ProbeGrid,
    config: TrainConfig,
    fit: Callable[..., ProbeResults],
    site_names: Sequence[str] | None,
    **options: Any,
) -> ProbeResults:
    """`fit(feats, targets, splits, grid, config, **options)` (`fit_probes` on a tensor) of the
    FeatureSet's sites, read under `config.memory`; sites named by `site_names`, else by the
    FeatureSet's own names. For a CUDA device (`options["device"]`, else CUDA when present) the
    features go from disk through pinned host memory to the device (`host_buffers`)."""
    n_sites = features.shape[1]
    names = tuple(features.site_names) if site_names is None else tuple(site_names)
    check_site_names(names, n_sites, "the FeatureSet (or none: its own names are used)")

    def tensor_fit(x: Tensor, group_grid: ProbeGrid, group_config: TrainConfig) -> ProbeResults:
        return fit(x, targets, splits, group_grid, group_config, **options)

    budget = config.memory_bytes
    device = resolve_device(options.get("device"), None)
    results = fit_in_site_groups(features, grid, config, budget, tensor_fit, device)
    if results is None and budget is not None:  # not one site fits: stream item blocks
        held = held_dtype(features.dtype, config)
        layout = grid.layout(n_sites)
        log.warning(
            "fit_probes: one site's features (%s) do not fit memory=%s: each site streams"
            " item blocks every epoch, which costs at least one read of its features per epoch"
            " (the shards that hold each part's rows); more memory trains on whole sites,"
            " reading every byte once",
            format_bytes(features.shape[0] * features.shape[2] * held.itemsize),
            format_bytes(budget),
        )
        one_site, streamed = replace(grid, sites=None), replace(config, memory=None)
        parts = []
        for position, site in enumerate(layout.sites):
            stream = ItemStream(features, [site], budget)
            x = stream.placeholder()
            part = fit(x, targets, splits, one_site, streamed, stream=stream, **options)
            parts.append((position, part))
        results = merge_site_groups(parts, layout)
    assert results is not None
    results.site_names = names
    return results
