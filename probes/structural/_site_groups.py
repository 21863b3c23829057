"""Structural probes on a `FeatureSet` under `StructuralConfig.memory`, one group of sites at once.

Each group of the grid's sites that fits the budget (`probes._grid.memory_budget.plan_sites`) is
read once, every probe of its sites trains to the end and the group is released, while the next
group is read in the background (`probes._grid.site_reader`). The regimen is per probe: each
probe has its own learning rate, plateau count, best epoch and early stop, a stopped probe is
frozen, and a fit ends only when all its probes have stopped, which changes no probe's numbers.
Shuffles are keyed by the seed, initialisations by (seed, site, rank) with the site's index in
the features, and the gradient, the dev loss and the predictions of a site read only that
site's features and probes, so a group's probes get the numbers of the fit of every site.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import torch
from torch import Tensor

from lingprobe.feature_set import FeatureSet
from probes._grid.memory_budget import format_bytes, log_site_groups, plan_sites
from probes._grid.site_reader import item_major_reader, site_groups
from probes.errors import ProbeConfigError
from probes.structural._probe import StructuralConfig, StructuralLayout
from probes.structural._results import StructuralResults

log = logging.getLogger(__name__)
LayoutFit = Callable[[Tensor, StructuralLayout], StructuralResults]


def fit_in_site_groups(
    features: FeatureSet,
    layout: StructuralLayout,
    config: StructuralConfig,
    fit: LayoutFit,
    device: torch.device,
) -> StructuralResults:
    """`fit(x, group_layout)` of each group of `layout`'s sites (x `[word, site, dim]` float32:
    the group's features, read for `device`: on a CUDA device x is there already, copied from
    pinned host memory while the group before trained; `group_layout`: the grid's seeds and
    ranks at the group's sites), merged into the results of the whole grid."""
    n_words, _, dim = features.shape
    site_bytes = n_words * dim * 4  # float32, what the trainer computes on
    budget = config.memory_bytes
    plan = plan_sites(len(layout.sites), site_bytes, budget)
    if plan.streamed:
        raise ProbeConfigError(
            f"StructuralConfig.memory={config.memory!r} ({format_bytes(budget or 0)}) is less"
            f" than one site's features ({format_bytes(site_bytes)}, {n_words} words x {dim}"
            " floats); each epoch trains on and evaluates every sentence of a site, so give memory"
            f" >= {site_bytes} bytes ({format_bytes(site_bytes)}), or fit on fewer sentences"
        )
    log_site_groups(log, "fit_structural_probes", plan, site_bytes, budget)
    parts = []
    read = item_major_reader(features, layout.sites, torch.float32, device)
    for group, x in site_groups(read, plan.groups, plan.prefetch):
        sites = tuple(layout.sites[j] for j in group)
        parts.append((group, fit(x, StructuralLayout(layout.seeds, sites, layout.ranks))))
        del x  # released before the group after the next is read
    if len(parts) == 1:
        return parts[0][1]
    return StructuralResults.merge(parts, layout)
