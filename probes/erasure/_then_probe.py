"""Erase-then-probe: a task's probes on the original features and on each erased copy, at once.

The erased copies are stacked along the site axis (`[item, (1 + erasers) * site, width]`), so
every (eraser, site) is one more site of a single `fit_probes` grid: one optimisation trains
them all. A random-direction eraser of equal rank (`random_eraser`) is the control: what the
task loses to erasing any subspace that large.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl
import torch
from jaxtyping import Float
from torch import Tensor

from lingprobe.feature_set import FeatureSet
from probes._grid.site_reader import in_memory
from probes.config import TrainConfig
from probes.erasure._leace import AffineEraser
from probes.errors import ProbeInputError
from probes.grid import ProbeGrid
from probes.results import TABLE_COLUMNS
from probes.splits import Splits
from probes.train import fit_probes

ORIGINAL = "none"


def erase_then_probe(
    feats: Float[Tensor, "item site width"] | FeatureSet,
    targets: Tensor | np.ndarray,
    splits: Splits | Tensor | np.ndarray,
    erasers: Mapping[str, AffineEraser],
    grid: ProbeGrid | None = None,
    config: TrainConfig | None = None,
    *,
    keys: Tensor | np.ndarray | list | None = None,
    num_classes: int | None = None,
    device: torch.device | str | None = None,
    progress: bool = True,
) -> pl.DataFrame:
    """Train the task's probes on `feats` and on `eraser(feats)` for every named eraser.

    Every eraser holds one map per site of `feats`. `grid.sites` is ignored (all sites of all
    copies are probed); the rest of the grid and `config` apply to every copy. Returns the
    long table of `ProbeResults.table()` with `eraser` (`"none"` for the original features),
    `site_index` (the site of `feats`) and `site` (that index written out, as `fit_probes`
    names sites it is given no names for). A `FeatureSet` is read whole (the erased
    copies are made in memory beside it).
    """
    feats = in_memory(feats)
    if ORIGINAL in erasers:
        raise ProbeInputError(f"erasers: the name {ORIGINAL!r} is reserved for the originals.")
    for name, eraser in erasers.items():
        if eraser.n_sites != feats.shape[1]:
            raise ProbeInputError(
                f"erasers[{name!r}] holds {eraser.n_sites} sites but feats has"
                f" {feats.shape[1]}; fit the eraser on the same sites."
            )
    copies = [feats, *(eraser(feats) for eraser in erasers.values())]
    stacked = torch.cat(copies, dim=1)
    base = grid or ProbeGrid()
    whole = ProbeGrid(
        seeds=base.seeds,
        task=base.task,
        control=base.control,
        train_fractions=base.train_fractions,
        mdl=base.mdl,
        kind=base.kind,
        hidden=base.hidden,
    )
    results = fit_probes(
        stacked,
        targets,
        splits,
        whole,
        config,
        keys=keys,
        num_classes=num_classes,
        device=device,
        progress=progress,
    )
    n_sites = feats.shape[1]
    names = [ORIGINAL, *erasers]
    copy = pl.col("site_index") // n_sites
    table = results.table().with_columns(
        eraser=copy.replace_strict(dict(enumerate(names)), return_dtype=pl.String),
        site_index=pl.col("site_index") % n_sites,
    )
    return table.with_columns(site=pl.col("site_index").cast(pl.String)).select(
        "eraser", *TABLE_COLUMNS
    )
