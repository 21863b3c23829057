"""`fit_logistic_regression` on a `FeatureSet`: the sites are the feature blocks, read in groups.

Probe p reads site `p // (P / sites)`. Each group of sites that fits the memory budget is read
once (`site_reader`, the next group in the background), its probes are fitted to the end
and the group is released. Batched L-BFGS runs every probe on its own (its history, line
search and stopping test; a feature block's GEMMs read only that block's probes), so fitting a
group alone gives its probes the numbers of the fit of every site at once.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import torch
from jaxtyping import Int
from torch import Tensor

from lingprobe.feature_set import FeatureSet
from probes._grid.memory_budget import checked_memory, format_bytes, plan_sites
from probes._grid.site_reader import site_groups, site_major_reader
from probes.errors import ProbeConfigError, ProbeInputError

log = logging.getLogger(__name__)
Fitted = TypeVar("Fitted")


def fit_logistic_feature_set(
    features: FeatureSet,
    y: Int[Tensor, "probe item"],
    C: float,
    num_classes: int | None,
    init: Any,
    memory: int | str | None,
    polish: bool,
    fit: Callable[..., Fitted],
    device: torch.device,
) -> Fitted:
    """`fit(X, y, C, num_classes, init)` of each group of sites (`X` `[site, item, dim]`, read
    for `device`: on a CUDA device X is there already, copied from pinned host memory while the
    group before was fitted), the fitted probes put together in probe order; `polish`: the fit
    also holds a float64 copy of its features."""
    budget = checked_memory(memory, "fit_logistic_regression: memory")
    n_items, n_sites, dim = features.shape
    if y.ndim != 2 or y.shape[1] != n_items or y.shape[0] % n_sites:
        raise ProbeInputError(
            f"y: shape {tuple(y.shape)} for a FeatureSet of {n_sites} sites and {n_items} items;"
            " give [probe, item] class ids with a whole number of probes per site (probe p"
            " reads site p // (P / sites))"
        )
    site_bytes = n_items * dim * (12 if polish else 4)  # float32, and float64 to polish
    plan = plan_sites(n_sites, site_bytes, budget)
    if plan.streamed:
        raise ProbeConfigError(
            f"fit_logistic_regression: memory={memory!r} ({format_bytes(budget or 0)}) is less"
            f" than one site's features ({format_bytes(site_bytes)}, {n_items} items x {dim}"
            " floats); L-BFGS reads every item at each of its iterations, so give memory of at"
            f" least {format_bytes(site_bytes)}, or fit on fewer items"
        )
    if len(plan.groups) > 1:
        log.info(
            "fit_logistic_regression: %d sites of %s each in %d groups under memory=%s",
            n_sites,
            format_bytes(site_bytes),
            len(plan.groups),
            format_bytes(budget or 0),
        )
    per_site = y.shape[0] // n_sites
    if num_classes is None and not y.is_floating_point() and y.numel():
        num_classes = int(y.max()) + 1  # every group fits the classes of the whole y
    parts = []
    read = site_major_reader(features, range(n_sites), device)
    for group, X in site_groups(read, plan.groups, plan.prefetch):
        probes = torch.arange(group[0] * per_site, (group[-1] + 1) * per_site)
        start = None if init is None else init.select(probes)
        parts.append(fit(X, y[probes.to(y.device)], C, num_classes, start))
        del X
    if len(parts) == 1:
        return parts[0]
    fields = dataclasses.fields(parts[0])  # type: ignore[arg-type]
    merged = {f.name: torch.cat([getattr(p, f.name) for p in parts]) for f in fields}
    return type(parts[0])(**merged)
