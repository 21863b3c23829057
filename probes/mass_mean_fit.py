"""`fit_probes` for `ProbeGrid(kind="mass_mean" | "mass_mean_iid")`: closed-form probes.

Every probe of the grid (mask, seed, site, variant) is the mass-mean probe (`probes.mass_mean`)
of its training items: the items of its train mask (fractions take the seed's shuffled prefix
of the train split, as the trained kinds do), labelled by its variant (the task, or its seed's
control labels). Probes that share their training items and labels share one computation. No
epochs and no dev selection: the probes are scored by the same evaluation as the trained kinds
(`probes.evaluate.Evaluator.final`: every split's metrics, test predictions, AUROC), and their
`best_epoch` is null.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
import torch
from jaxtyping import Float
from torch import Tensor

from probes._grid.inputs import (
    check_features,
    check_site_names,
    check_targets,
    grid_site_features,
    resolve_device,
    type_ids,
    warn_absent_classes,
)
from probes._grid.item_stream import ItemStream
from probes._grid.masks import per_seed, plan_masks
from probes._grid.workers import resolve_threads, worker_pool
from probes.config import TrainConfig
from probes.control import variant_targets
from probes.errors import ProbeConfigError
from probes.evaluate import Evaluator
from probes.grid import ProbeGrid, ProbeLayout
from probes.heads import make_head
from probes.linear import LinearProbes
from probes.mass_mean import MASS_MEAN_KINDS, mass_mean_probe
from probes.result_frames import metrics_frame
from probes.results import ProbeResults
from probes.splits import Splits, split_codes, warn_empty_test

__all__ = ["MASS_MEAN_KINDS", "fit_mass_means"]


def fit_mass_means(
    feats: Float[Tensor, "item site dim"],
    targets: Tensor | np.ndarray,
    splits: Splits | Tensor | np.ndarray,
    grid: ProbeGrid,
    config: TrainConfig,
    *,
    keys: Tensor | np.ndarray | list | None,
    num_classes: int | None,
    device: torch.device | str | None,
    progress: bool,
    site_names: Sequence[str] | None = None,
    stream: ItemStream | None = None,
) -> ProbeResults:
    """`fit_probes` of a mass-mean grid on a tensor (the same arguments; `progress` unused:
    there are no epochs). `TrainConfig` gives the evaluation settings (`eval_batch`,
    `threads`) and `shared_order` / `order_seed` (which items a fraction mask holds)."""
    if stream is not None:
        raise ProbeConfigError(
            f"ProbeGrid.kind={grid.kind!r} reads each site whole, and one site of the features"
            " does not fit TrainConfig.memory; raise TrainConfig.memory (or set it to None)."
        )
    if grid.mdl_blocks is not None:
        raise ProbeConfigError(
            f"ProbeGrid(kind={grid.kind!r}, mdl=True): a mass-mean probe's scores are not"
            " calibrated probabilities, so its online code is not a codelength; use kind='linear'"
            " for MDL."
        )
    check_features(feats)
    n_items, n_sites, _ = feats.shape
    codes = split_codes(splits, n_items)
    warn_empty_test(codes)
    target = check_targets(targets, n_items, num_classes)
    if target.kind != "classification":
        raise ProbeConfigError(
            f"ProbeGrid.kind={grid.kind!r} needs class ids (a difference of class means); these"
            f" targets are {target.kind}. Use kind='linear' for them."
        )
    check_site_names(site_names, n_sites, "feats (e.g. [s.name for s in sites])")
    layout = grid.layout(n_sites)
    dev = resolve_device(device, feats)
    ids = type_ids(keys, n_items) if keys is not None else None
    explicit = grid.explicit_masks
    warn_absent_classes(target, codes, None if explicit is None else per_seed(explicit))
    x = grid_site_features(feats, layout.sites, dev)
    labels = variant_targets(target, ids, layout).to(dev)  # [seed, variant, item]
    order_keys = [config.order_seed] if config.shared_order else list(layout.seeds)
    plan = plan_masks(
        explicit, grid.explicit_dev_masks, layout.masks, codes, order_keys, len(layout.seeds)
    )
    members = plan.train_membership(n_items, len(layout.seeds), config.shared_order).to(dev)
    head = make_head("classification", target.num_classes)
    probes = LinearProbes(layout, x.shape[2], head.outputs)
    probes.to(dev)
    _closed_form(probes, x, labels, members, layout, grid.kind == "mass_mean_iid")
    evaluator = Evaluator(
        x, codes, labels, layout, head, probes, config.eval_batch, head.primary, plan.dev
    )
    workers = resolve_threads(config.threads) if dev.type == "cpu" else 1
    with worker_pool(workers) as pool:
        scores, _ = evaluator.final(layout.per_probe(members), with_bits=False, pool=pool)
    no_epoch = pl.Series([None] * layout.n_probes, dtype=pl.Int64)
    return ProbeResults(
        probes=layout.frame().with_columns(best_epoch=no_epoch, diverged_epoch=no_epoch),
        metrics=metrics_frame(scores),
        weights=probes.export(probes.best),
        kind=grid.kind,
        head=target.kind,
        test=evaluator.test,
        mask_kind="mask_id" if explicit is not None else "train_fraction",
        site_names=tuple(site_names) if site_names is not None else None,
    )


def _closed_form(
    probes: LinearProbes,
    x: Float[Tensor, "item site dim"],
    labels: Tensor,
    members: Tensor,
    layout: ProbeLayout,
    iid: bool,
) -> None:
    """Write every probe's mass-mean weights into `probes.best` (training layout
    `[mask, site, seed, variant, ...]`); probes with equal training items and labels share one
    computation."""
    k = probes.specs["intercept"].shape[0]
    coef, intercept = probes.best["coef"], probes.best["intercept"]
    n_masks, n_seeds, _, n_variants = layout.shape
    shared: dict[tuple[bytes, bytes], tuple[int, int, int]] = {}  # training set -> first probe
    first = {}
    for m, s, v in np.ndindex(n_masks, n_seeds, n_variants):
        key = (members[m, s].cpu().numpy().tobytes(), labels[s, v].cpu().numpy().tobytes())
        first[(m, s, v)] = shared.setdefault(key, (m, s, v))
    for t in range(len(layout.sites)):
        for (m, s, v), (m0, s0, v0) in first.items():
            if (m, s, v) == (m0, s0, v0):
                fitted = mass_mean_probe(x[:, t], labels[s, v], members[m, s], k, iid)
                coef[m, t, s, v], intercept[m, t, s, v] = fitted
            else:
                coef[m, t, s, v], intercept[m, t, s, v] = (
                    coef[m0, t, s0, v0],
                    intercept[m0, t, s0, v0],
                )
    probes.params = {name: tensor.clone() for name, tensor in probes.best.items()}
