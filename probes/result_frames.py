"""Long polars frames built from a fit's tensors: metrics per (probe, split, metric) (NaN for
probes that diverged, `unscored`), and MDL codelengths per (site, seed, variant).
`ProbeResults` holds them."""

from __future__ import annotations

import warnings

import polars as pl
import torch
from jaxtyping import Float, Int
from torch import Tensor

from probes.errors import ProbeDivergedWarning


def metrics_frame(scores: dict[str, dict[str, Tensor]]) -> pl.DataFrame:
    """Long frame (probe, split, metric, value) from `{split: {metric: [P] values}}`."""
    parts = [
        pl.DataFrame(
            {
                "probe": list(range(values.shape[0])),
                "split": split,
                "metric": metric,
                "value": values.double().cpu().numpy(),
            },
            schema={"probe": pl.Int64, "split": pl.Utf8, "metric": pl.Utf8, "value": pl.Float64},
        )
        for split, by_metric in scores.items()
        for metric, values in by_metric.items()
    ]
    return pl.concat(parts)


def codelength_frame(
    online: Float[Tensor, "seed site variant"],
    seeds: tuple[int, ...],
    sites: tuple[int, ...],
    variants: tuple[str, ...],
    uniform: float,
) -> pl.DataFrame:
    """(site, seed, variant, online_bits, uniform_bits, compression) rows."""
    grid = torch.meshgrid(*(torch.arange(n) for n in online.shape), indexing="ij")
    s, t, v = (g.reshape(-1).tolist() for g in grid)
    bits = online.reshape(-1).double()
    return pl.DataFrame(
        {
            "site": [sites[i] for i in t],
            "seed": [seeds[i] for i in s],
            "variant": [variants[i] for i in v],
            "online_bits": bits.numpy(),
            "uniform_bits": [uniform] * len(s),
            "compression": (uniform / bits).numpy(),
        },
        schema_overrides={"site": pl.Int64, "seed": pl.Int64},
    )


def unscored(
    scores: dict[str, dict[str, Tensor]], diverged_epoch: Int[Tensor, " probe"]
) -> dict[str, dict[str, Tensor]]:
    """Metrics with NaN for every probe that diverged (never scored), and a warning naming them."""
    bad = diverged_epoch > 0
    if not bool(bad.any()):
        return scores
    warnings.warn(
        f"fit_probes: {int(bad.sum())} of {len(bad)} probes diverged (parameters or dev loss"
        f" became NaN or inf, first at epoch {int(diverged_epoch[bad].min())}); their metrics"
        " are NaN and probes['diverged_epoch'] says when. Lower TrainConfig.lr or scale the"
        " features.",
        ProbeDivergedWarning,
        stacklevel=3,
    )
    return {
        split: {name: torch.where(bad.to(v.device), torch.nan, v.double()) for name, v in m.items()}
        for split, m in scores.items()
    }
