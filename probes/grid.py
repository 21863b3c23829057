"""`ProbeGrid`: sites x seeds x variants (task, control) x train masks, flattened to P probes.

Probe index order is (mask, seed, site, variant), variant fastest; `ProbeLayout.frame()` lists it.
A train mask is either a fraction of the training items, a prefix of the seed's shuffled training
order (data-fraction runs such as FlashHolmes, and the MDL block prefixes), or an explicit set of
items (`train_masks`, e.g. label-stratified subsamples or cross-fitting folds; see `masks.py`).
Masks are trained largest first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import polars as pl
import torch
from jaxtyping import Bool, Int
from torch import Tensor

from probes._grid.field_rules import Rule, check_fields
from probes._grid.masks import check_explicit_masks, explicit_mask_order
from probes.errors import ProbeConfigError
from probes.mdl import MDLBlocks

VARIANTS = ("task", "control")


@dataclass(frozen=True)
class ProbeGrid:
    """Which probes to train: every combination of sites, seeds, variants and train masks.

    `sites=None` takes every site of the features. `control=True` adds the control task
    (Hewitt & Liang 2019) next to the task (`task=False` leaves only the control).
    `mdl=True` (or an `MDLBlocks`) adds the MDL block prefixes as train masks.
    Control-task types (`keys`) are given to `fit_probes`, since they belong to the data.
    `kind`: trained linear probes or one-hidden-layer MLPs (`hidden` units), or closed-form
    mass-mean probes, the difference of class means (`"mass_mean"`, or `"mass_mean_iid"` with
    the inverse within-class covariance; see `probes.mass_mean`).

    `train_masks` (instead of fractions and MDL blocks): explicit training sets, booleans
    `[mask, item]` (one set per mask, for every seed) or `[mask, seed, item]` (one per mask and
    seed, e.g. seed s's subsample); the probes of a mask train on its items only, all masks in
    one optimisation. Without `dev_masks` they must be train items of the splits, and every
    probe picks its best epoch on the splits' dev items. `dev_masks` (same shape) give each mask
    its own dev items (e.g. cross-fitting folds, each carving its dev part from its own training
    data): the masks then replace the splits' train/dev roles (their items must be train or dev
    items of the splits; a mask's train and dev items are disjoint), and the test items stay the
    splits'. With explicit masks, the `mask` column of the results is the mask's position in
    `train_masks` (0, 1, ...); a mask's seeds must hold equally many items (one step schedule),
    and `TrainConfig.shared_order` takes `[mask, item]` masks only. Masks take no part in `==`.

    Examples:
        >>> from probes import ProbeGrid
        >>> grid = ProbeGrid(seeds=(0, 1), control=True)
        >>> grid.variants
        ('task', 'control')
        >>> grid.layout(n_sites=3).n_probes  # 3 sites x 2 seeds x {task, control}
        12
    """

    seeds: Sequence[int] = range(5)  # Holmes (Waldis et al. 2024) App. A.2: seeds [0,1,2,3,4]
    task: bool = True
    control: bool = False
    sites: Sequence[int] | None = None
    train_fractions: Sequence[float] = (1.0,)
    mdl: bool | MDLBlocks = False
    # Holmes §3: linear probes; mass_mean(_iid): closed form (Marks & Tegmark 2023, mass_mean.py)
    kind: Literal["linear", "mlp", "mass_mean", "mass_mean_iid"] = "linear"
    hidden: int = 1024  # MLP hidden width (one ReLU layer)
    train_masks: Tensor | np.ndarray | None = field(default=None, compare=False, repr=False)
    dev_masks: Tensor | np.ndarray | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        check_fields(self, GRID_RULES)
        if self.mdl is True:
            object.__setattr__(self, "mdl", MDLBlocks())
        if not (self.task or self.control):
            raise ProbeConfigError(
                "ProbeGrid.task=False and ProbeGrid.control=False: no probe to train; keep the"
                " task (task=True) or add the control (control=True)"
            )
        train, dev = check_explicit_masks(self.train_masks, self.dev_masks, len(self.seeds))
        object.__setattr__(self, "train_masks", train)
        object.__setattr__(self, "dev_masks", dev)
        if train is not None and (self.train_fractions != (1.0,) or self.mdl):
            raise ProbeConfigError(
                "ProbeGrid.train_masks replaces train_fractions and mdl: give explicit masks, or"
                " fractions / MDL blocks, not both."
            )

    @property
    def explicit_masks(self) -> Tensor | None:
        """The explicit train masks (bool, `[mask, item]` or `[mask, seed, item]`), or None."""
        return self.train_masks if isinstance(self.train_masks, Tensor) else None

    @property
    def explicit_dev_masks(self) -> Tensor | None:
        """The explicit dev masks (same shape as the train masks), or None."""
        return self.dev_masks if isinstance(self.dev_masks, Tensor) else None

    @property
    def variants(self) -> tuple[str, ...]:
        """The label variants trained at every (site, seed, mask)."""
        return tuple(v for v, on in zip(VARIANTS, (self.task, self.control)) if on)

    @property
    def mdl_blocks(self) -> MDLBlocks | None:
        """The MDL block configuration, or None."""
        return self.mdl if isinstance(self.mdl, MDLBlocks) else None

    @property
    def mask_fractions(self) -> tuple[float, ...]:
        """Train-mask fractions, largest first: `train_fractions` and the MDL block prefixes."""
        blocks = self.mdl_blocks
        extra = blocks.probe_fractions if blocks is not None else ()
        return tuple(sorted(set(self.train_fractions) | set(extra), reverse=True))

    def layout(self, n_sites: int) -> ProbeLayout:
        """The flattened probe index for features with `n_sites` sites (explicit masks: their
        positions, largest mask first)."""
        sites = tuple(range(n_sites)) if self.sites is None else self.sites
        bad = [s for s in sites if not 0 <= s < n_sites]
        if bad:
            raise ProbeConfigError(
                f"ProbeGrid.sites: site {bad[0]} is outside the features' {n_sites} sites;"
                f" use indices 0..{n_sites - 1}."
            )
        explicit = self.explicit_masks
        masks = self.mask_fractions if explicit is None else explicit_mask_order(explicit)
        return ProbeLayout(masks, tuple(self.seeds), tuple(sites), self.variants)


def _distinct(values: tuple[int, ...]) -> bool:
    return len(values) > 0 and len(set(values)) == len(values)


GRID_RULES = {
    "seeds": Rule(
        lambda v: _distinct(v) and min(v) >= 0,
        "distinct integers >= 0, at least one",
        "seeds=[0, 1, 2, 3, 4] (Holmes)",
    ),
    "sites": Rule(
        lambda v: v is None or (_distinct(v) and min(v) >= 0),
        "None (every site) or distinct site indices >= 0",
        "sites=[0, 6]",
    ),
    "train_fractions": Rule(
        lambda v: len(v) > 0 and all(0 < f <= 1 for f in v),
        "fractions of the training items in (0, 1], at least one",
        "train_fractions=(0.1, 1.0)",
    ),
    "hidden": Rule(lambda v: v >= 1, "an integer >= 1", "hidden=1024"),
}


@dataclass(frozen=True)
class ProbeLayout:
    """The axes of a grid, in training order (mask, seed, site, variant); `masks` are train
    fractions, or the positions of explicit masks."""

    masks: tuple[float, ...]
    seeds: tuple[int, ...]
    sites: tuple[int, ...]
    variants: tuple[str, ...]

    @property
    def shape(self) -> tuple[int, int, int, int]:
        """(masks, seeds, sites, variants)."""
        return (len(self.masks), len(self.seeds), len(self.sites), len(self.variants))

    @property
    def n_probes(self) -> int:
        """P: the number of probes."""
        m, s, t, v = self.shape
        return m * s * t * v

    def from_site_major(self, y: Tensor) -> Tensor:
        """`[site, item, mask*seed*variant, ...]` (evaluation layout) -> `[P, item, ...]`."""
        m, s, t, v = self.shape
        n, rest = y.shape[1], y.shape[3:]
        tail = range(5, 5 + len(rest))
        y = y.reshape(t, n, m, s, v, *rest).permute(2, 3, 0, 4, 1, *tail)
        return y.reshape(self.n_probes, n, *rest)

    def to_site_major(self, y: Tensor) -> Tensor:
        """`[P, item, ...]` -> `[site, item, mask*seed*variant, ...]` (evaluation layout)."""
        m, s, t, v = self.shape
        n, rest = y.shape[1], y.shape[2:]
        tail = range(5, 5 + len(rest))
        y = y.reshape(m, s, t, v, n, *rest).permute(2, 4, 0, 1, 3, *tail)
        return y.reshape(t, n, m * s * v, *rest)

    def per_probe(self, sets: Bool[Tensor, "mask seed item"]) -> Bool[Tensor, "probe item"]:
        """Item sets of every (mask, seed) as `[P, item]` (shared by its sites and variants)."""
        m, s, t, v = self.shape
        return sets[:, :, None, None].expand(m, s, t, v, -1).reshape(self.n_probes, -1)

    def axis_index(self) -> Int[Tensor, "axis probe"]:
        """Per probe, its position on each axis: rows mask, seed, site, variant."""
        grids = torch.meshgrid(*(torch.arange(n) for n in self.shape), indexing="ij")
        return torch.stack([g.reshape(-1) for g in grids])

    def frame(self) -> pl.DataFrame:
        """One row per probe: probe, site, seed, variant, mask (the mask's train fraction, or
        its position among explicit masks)."""
        m, s, t, v = self.axis_index().tolist()
        return pl.DataFrame(
            {
                "probe": list(range(self.n_probes)),
                "site": [self.sites[i] for i in t],
                "seed": [self.seeds[i] for i in s],
                "variant": [self.variants[i] for i in v],
                "mask": [self.masks[i] for i in m],
            },
            schema={
                "probe": pl.Int64,
                "site": pl.Int64,
                "seed": pl.Int64,
                "variant": pl.Utf8,
                "mask": pl.Float64,
            },
        )
