"""`ProbeResults`: per-probe metrics, best epochs, weights and MDL codelengths, as polars frames.

Saved as a directory: `probes.parquet`, `metrics.parquet`, `codelengths.parquet` (when MDL ran)
and `weights.safetensors`; every file is written to a temporary name and renamed into place.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import torch
from jaxtyping import Float, Int, Shaped
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from torch import Tensor

from probes.errors import ProbeConfigError
from probes.heads import make_head

TABLE_COLUMNS = ["site", "seed", "variant", "mask", "split", "metric", "value", "best_epoch"]


@dataclass
class ProbeResults:
    """What `fit_probes` returns.

    probes: one row per probe (probe, site, seed, variant, mask, best_epoch; epochs from 1);
    metrics: long frame (probe, split, metric, value) at each probe's best dev epoch;
    weights: stored input-major, `coef [P, D, C]`, `intercept [P, C]` (MLP: also
    `hidden_weight [P, D, H]`, `hidden_bias [P, H]`, and `coef` is `[P, H, C]`), CPU tensors in
    probe order; `coef_` / `intercept_` give the output layer in scikit-learn's layout;
    codelengths: (site, seed, variant, online_bits, uniform_bits, compression) or None.
    """

    probes: pl.DataFrame
    metrics: pl.DataFrame
    weights: dict[str, Tensor]
    codelengths: pl.DataFrame | None = None
    kind: str = "linear"
    head: str = "classification"

    @property
    def coef_(self) -> Float[Tensor, "probe class in"]:
        """Output-layer weights `[P, C, D (or H)]`: scikit-learn's layout, as
        `LogisticProbes.coef_` (a view of `weights["coef"]`, which is stored input-major)."""
        return self.weights["coef"].transpose(1, 2)

    @property
    def intercept_(self) -> Float[Tensor, "probe class"]:
        """Output-layer biases `[P, C]`."""
        return self.weights["intercept"]

    def logits(
        self, feats: Float[Tensor, "item site dim"], rows: Int[Tensor, " row"] | None = None
    ) -> Float[Tensor, "probe row out"]:
        """Every probe's outputs on `feats` (the site axis the probes were trained on), or on
        its `rows` only (read one site at a time: no copy of those rows' features)."""
        w = {n: t.to(feats.device) for n, t in self.weights.items()}
        sites = torch.tensor(self.probes.sort("probe")["site"].to_list())
        n = feats.shape[0] if rows is None else rows.shape[0]
        index = None if rows is None else rows.to(feats.device)
        out = torch.empty(len(sites), n, w["coef"].shape[-1], device=feats.device)
        for site in sites.unique().tolist():
            at = (sites == site).nonzero().flatten().to(feats.device)
            x = feats[:, site] if index is None else feats[:, site].index_select(0, index)
            x = x.float()
            if "hidden_weight" in w:
                hid = torch.einsum("nd,pdh->pnh", x, w["hidden_weight"][at])
                x_p = (hid + w["hidden_bias"][at, None]).relu_()
                out[at] = torch.baddbmm(w["intercept"][at, None], x_p, w["coef"][at])
            else:
                logits = torch.einsum("nd,pdc->pnc", x, w["coef"][at])
                out[at] = logits + w["intercept"][at, None]
        return out

    def predict(
        self, feats: Float[Tensor, "item site dim"], rows: Int[Tensor, " row"] | None = None
    ) -> Shaped[Tensor, " probe row *o"]:
        """Predictions of every probe (on `feats`, or its `rows`): class ids, 0/1 label rows
        (bool), or values."""
        logits = self.logits(feats, rows)
        return make_head(self.head, logits.shape[-1]).predict(logits)

    def table(self) -> pl.DataFrame:
        """Long table: site, seed, variant, mask, split, metric, value, best_epoch."""
        return self.metrics.join(self.probes, on="probe").select(TABLE_COLUMNS)

    def summary(self) -> pl.DataFrame:
        """Mean and (sample) standard deviation over seeds per site/variant/mask/split/metric."""
        keys = ["site", "variant", "mask", "split", "metric"]
        return (
            self.table()
            .group_by(keys)
            .agg(
                mean=pl.col("value").mean(),
                std=pl.col("value").std(),
                n_seeds=pl.col("seed").n_unique(),
            )
            .sort(keys)
        )

    def selectivity(self) -> pl.DataFrame:
        """Task minus control metric per site (Hewitt & Liang 2019), mean and std over seeds."""
        table = self.table()
        if set(table["variant"].unique()) != {"task", "control"}:
            raise ProbeConfigError(
                "selectivity needs task and control probes: fit with ProbeGrid(control=True)."
            )
        keys = ["site", "seed", "mask", "split", "metric"]
        task = table.filter(variant="task").select(*keys, task="value")
        control = table.filter(variant="control").select(*keys, control="value")
        paired = task.join(control, on=keys).with_columns(
            selectivity=pl.col("task") - pl.col("control")
        )
        groups = ["site", "mask", "split", "metric"]
        return (
            paired.group_by(groups)
            .agg(
                pl.col("task").mean(),
                pl.col("control").mean(),
                pl.col("selectivity").mean(),
                selectivity_std=pl.col("selectivity").std(),
            )
            .sort(groups)
        )

    def mdl(self) -> pl.DataFrame:
        """Online and uniform codelengths (bits) and compression per site, seed and variant."""
        if self.codelengths is None:
            raise ProbeConfigError("no MDL codelengths: fit with ProbeGrid(mdl=True).")
        return self.codelengths

    def save(self, directory: str | os.PathLike[str]) -> None:
        """Write the frames as parquet and the weights as safetensors into `directory`."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        _atomic(out / "probes.parquet", self.probes.write_parquet)
        _atomic(out / "metrics.parquet", self.metrics.write_parquet)
        if self.codelengths is not None:
            _atomic(out / "codelengths.parquet", self.codelengths.write_parquet)
        meta = {"kind": self.kind, "head": self.head}
        weights = {n: t.contiguous() for n, t in self.weights.items()}
        _atomic(out / "weights.safetensors", lambda p: save_file(weights, p, metadata=meta))

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> ProbeResults:
        """Read results written by `save`."""
        src = Path(directory)
        with safe_open(src / "weights.safetensors", framework="pt") as f:
            meta = f.metadata() or {}
        codelengths = src / "codelengths.parquet"
        return cls(
            probes=pl.read_parquet(src / "probes.parquet"),
            metrics=pl.read_parquet(src / "metrics.parquet"),
            weights=load_file(src / "weights.safetensors"),
            codelengths=pl.read_parquet(codelengths) if codelengths.exists() else None,
            kind=meta.get("kind", "linear"),
            head=meta.get("head", "classification"),
        )


def _atomic(path: Path, write: Callable[[str], object]) -> None:
    """Write through a temporary file in the same directory, then rename over `path`."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


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
