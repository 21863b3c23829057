"""`StructuralResults`: what `fit_structural_probes` returns, and the results of a grid put
together from the results of its groups of sites."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl
import torch
from jaxtyping import Float
from torch import Tensor

from probes.structural._probe import StructuralLayout


@dataclass
class StructuralResults:
    """What `fit_structural_probes` returns.

    probes: one row per probe (probe, site, seed, rank, best_epoch, epochs, dev_loss; epochs
    from 1); metrics: long frame (probe, split, metric, value) of the best-epoch parameters;
    weights: `B [probe, dim, width]` (columns past a probe's rank are zero).
    """

    kind: str
    probes: pl.DataFrame
    metrics: pl.DataFrame
    weights: Float[Tensor, "probe dim width"]

    def table(self) -> pl.DataFrame:
        """Long table: site, seed, rank, split, metric, value, best_epoch."""
        return self.metrics.join(self.probes, on="probe").select(
            "site", "seed", "rank", "split", "metric", "value", "best_epoch"
        )

    @classmethod
    def merge(
        cls, parts: Sequence[tuple[tuple[int, ...], StructuralResults]], layout: StructuralLayout
    ) -> StructuralResults:
        """One grid's results from the results of its groups of sites: `(positions, results)`,
        each the grid of `layout`'s seeds and ranks at the sites `layout.sites[p]` of its
        positions. Probes are numbered as in the whole grid (seed, site, rank) and every frame
        is in the order the whole grid's fit gives it."""
        s, t, r = layout.shape
        every = torch.arange(layout.n_probes).view(s, t, r)
        probes, metrics = [], []
        weights = torch.empty(layout.n_probes, *parts[0][1].weights.shape[1:])
        for positions, res in parts:
            ids = every[:, list(positions)].reshape(-1)
            probes.append(res.probes.with_columns(probe=pl.Series(ids.numpy())))
            local = torch.from_numpy(res.metrics["probe"].to_numpy())
            metrics.append(res.metrics.with_columns(probe=pl.Series(ids[local].numpy())))
            weights[ids] = res.weights
        order = parts[0][1].metrics.select("split", "metric").unique(maintain_order=True)
        ranked = pl.concat(metrics).join(order.with_row_index("rank"), on=["split", "metric"])
        return cls(
            parts[0][1].kind,
            pl.concat(probes).sort("probe"),
            ranked.sort("rank", "probe").drop("rank"),
            weights,
        )
