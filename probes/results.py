"""`ProbeResults`: per-probe metrics, best epochs, weights and MDL codelengths, as polars frames.

Saved as a directory: `probes.parquet`, `metrics.parquet`, `codelengths.parquet` (when MDL ran),
`weights.safetensors`, `test_predictions.safetensors` (every probe's test predictions, int8/
int16 class ids, for the bootstrap intervals and paired tests) and last `manifest.json`, which
lists every file with its size and XXH3 digest. Each file is written to a temporary name and
renamed into place; a save first removes the old manifest, so a save killed part-way leaves a
folder without one. `load` reads only a folder whose manifest matches every file, else raises
`ResultsDamagedError` naming the file: it returns the old complete results or the new ones, never
a mixture.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl
import torch
from jaxtyping import Float, Int, Shaped
from safetensors.torch import load as safetensors_load
from safetensors.torch import save as safetensors_bytes
from torch import Tensor

from lingprobe.atomic import atomic_write_bytes, sync_folder
from lingprobe.digest import bytes_digest
from probes.bootstrap import IntervalMethod
from probes.compare import compare_probes
from probes.errors import ProbeConfigError, ResultsDamagedError
from probes.heads import make_head
from probes.intervals import SeedResampling, seed_mean_intervals
from probes.predictions import FILE as TEST_FILE
from probes.predictions import TestPredictions
from probes.probe_kinds import probe_type
from probes.sample_complexity import sample_complexity_columns

TABLE_COLUMNS = [
    "site",
    "site_index",
    "seed",
    "variant",
    "mask",
    "split",
    "metric",
    "value",
    "best_epoch",
    "mask_kind",
]
MaskKind = Literal["train_fraction", "mdl_block", "mask_id"]
MASK_KINDS: dict[str, MaskKind] = {
    "train_fraction": "train_fraction",
    "mdl_block": "mdl_block",
    "mask_id": "mask_id",
}
MANIFEST = "manifest.json"
FORMAT = "lingprobe-results/1"
FRAMES = ("probes", "metrics", "codelengths")
WEIGHTS = "weights.safetensors"
FILES = (*(f"{name}.parquet" for name in FRAMES), WEIGHTS, TEST_FILE)


@dataclass
class ProbeResults:
    """What `fit_probes` returns.

    probes: one row per probe (probe, site, seed, variant, mask, best_epoch; epochs from 1);
    metrics: long frame (probe, split, metric, value) at each probe's best dev epoch;
    weights: stored input-major, `coef [P, D, C]`, `intercept [P, C]` (MLP: also
    `hidden_weight [P, D, H]`, `hidden_bias [P, H]`, and `coef` is `[P, H, C]`), CPU tensors in
    probe order; `coef_` / `intercept_` give the output layer in scikit-learn's layout;
    codelengths: (site, seed, variant, online_bits, uniform_bits, compression) or None;
    test: every probe's test predictions and targets (`TestPredictions`), or None;
    site_names: the name of each site index (`fit_probes(site_names=...)`), or None;
    mask_kind: what `mask` holds: "train_fraction" (the fraction of train a probe saw, 1.0 =
    all), "mdl_block" (the online-code block's fraction) or "mask_id" (the position of an
    explicit train mask in `ProbeGrid.train_masks`).
    """

    probes: pl.DataFrame
    metrics: pl.DataFrame
    weights: dict[str, Tensor]
    codelengths: pl.DataFrame | None = None
    kind: str = "linear"
    head: str = "classification"
    test: TestPredictions | None = None
    site_names: tuple[str, ...] | None = None
    mask_kind: MaskKind = "train_fraction"

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
        forward = probe_type(self.kind).stored_logits
        w = {n: t.to(feats.device) for n, t in self.weights.items()}
        sites = torch.tensor(self.probes.sort("probe")["site"].to_list())
        n = feats.shape[0] if rows is None else rows.shape[0]
        index = None if rows is None else rows.to(feats.device)
        out = torch.empty(len(sites), n, w["intercept"].shape[-1], device=feats.device)
        for site in sites.unique().tolist():
            at = (sites == site).nonzero().flatten().to(feats.device)
            x = feats[:, site] if index is None else feats[:, site].index_select(0, index)
            out[at] = forward({name: t[at] for name, t in w.items()}, x.float())
        return out

    def predict(
        self, feats: Float[Tensor, "item site dim"], rows: Int[Tensor, " row"] | None = None
    ) -> Shaped[Tensor, " probe row *o"]:
        """Predictions of every probe (on `feats`, or its `rows`): class ids, 0/1 label rows
        (bool), or values."""
        logits = self.logits(feats, rows)
        return make_head(self.head, logits.shape[-1]).predict(logits)

    def table(self) -> pl.DataFrame:
        """Long table: site, site_index, seed, variant, mask, split, metric, value, best_epoch,
        mask_kind. `site` is the site's name (`fit_probes(site_names=...)`; without names, its
        index written out, "0", "1", ...), `site_index` its position on the features' site
        axis, `mask_kind` what `mask` holds (train_fraction, mdl_block or mask_id)."""
        index = self.probes["site"].unique().sort().to_list()
        names = self.site_names or tuple(str(i) for i in range(max(index, default=-1) + 1))
        name = pl.col("site_index").replace_strict(
            {i: names[i] for i in index}, return_dtype=pl.String
        )
        return (
            self.metrics.join(self.probes.rename({"site": "site_index"}), on="probe")
            .with_columns(site=name, mask_kind=pl.lit(self.mask_kind))
            .select(TABLE_COLUMNS)
        )

    def summary(
        self,
        ci: float | None = 0.95,
        *,
        n_resamples: int = 1000,
        method: IntervalMethod = "bca",
        seeds: SeedResampling = "fixed",
        seed: int = 0,
        device: torch.device | str | None = None,
    ) -> pl.DataFrame:
        """Mean and (sample) standard deviation over seeds per site/variant/mask/split/metric
        (sites as in `table`: `site` name and `site_index`), and (`ci`, test split only) a
        bootstrap interval `ci_low`/`ci_high` of the seed mean.

        The interval resamples the test items jointly for every probe and averages each
        resample over the seeds (`seeds="fixed"`): it covers the item-sampling variation of
        the seed mean of these trained probes; `std` shows the seed variation. `seeds=
        "resample"` (percentile only) also redraws the seeds in each resample, so the interval
        covers both (Owen 2007). Method: BCa or percentile, as `scipy.stats.bootstrap`.
        Train and dev rows get null intervals. `ci=None`: no interval columns.
        """
        keys = ["site", "site_index", "variant", "mask", "split", "metric"]
        frame = (
            self.table()
            .group_by(keys)
            .agg(
                mean=pl.col("value").mean(),
                std=pl.col("value").std(),
                n_seeds=pl.col("seed").n_unique(),
            )
            .sort(keys[1:])
        )
        if ci is None:
            return frame
        intervals = seed_mean_intervals(
            self.probes,
            self.test,
            ci=ci,
            n_resamples=n_resamples,
            method=method,
            seeds=seeds,
            seed=seed,
            device=device,
        ).rename({"site": "site_index"})
        intervals = intervals.with_columns(split=pl.lit("test"))
        return frame.join(intervals, on=keys[1:], how="left").sort(keys[1:])

    def selectivity(
        self,
        ci: float | None = 0.95,
        *,
        n_resamples: int = 1000,
        method: IntervalMethod = "bca",
        test: Literal["permutation", "bootstrap"] = "permutation",
        seed: int = 0,
        device: torch.device | str | None = None,
    ) -> pl.DataFrame:
        """Task minus control metric per site (Hewitt & Liang 2019), mean and std over seeds.

        With `ci` (test split rows only): `ci_low`/`ci_high` of the seed-mean selectivity
        (paired bootstrap of the test items), `p_value` of task = control (paired permutation
        or bootstrap test, seeds paired) and `p_holm` (Holm over the sites and masks of each
        metric); see `probes.compare.compare_probes`. `ci=None`: no such columns.
        """
        table = self.table()
        if set(table["variant"].unique()) != {"task", "control"}:
            raise ProbeConfigError(
                "selectivity needs task and control probes: fit with ProbeGrid(control=True)."
            )
        keys = ["site", "site_index", "seed", "mask", "split", "metric"]
        task = table.filter(variant="task").select(*keys, task="value")
        control = table.filter(variant="control").select(*keys, control="value")
        paired = task.join(control, on=keys).with_columns(
            selectivity=pl.col("task") - pl.col("control")
        )
        groups = ["site", "site_index", "mask", "split", "metric"]
        frame = (
            paired.group_by(groups)
            .agg(
                pl.col("task").mean(),
                pl.col("control").mean(),
                pl.col("selectivity").mean(),
                selectivity_std=pl.col("selectivity").std(),
            )
            .sort(groups[1:])
        )
        if ci is None:
            return frame
        tested = self.compare(
            left_where={"variant": "task"},
            right_where={"variant": "control"},
            ci=ci,
            n_resamples=n_resamples,
            method=method,
            test=test,
            seed=seed,
            device=device,
        ).select("mask", "metric", "ci_low", "ci_high", "p_value", "p_holm", site_index="site")
        tested = tested.with_columns(split=pl.lit("test"))
        return frame.join(tested, on=groups[1:], how="left").sort(groups[1:])

    def compare(self, other: ProbeResults | None = None, **options: Any) -> pl.DataFrame:
        """Paired comparison of two sets of probes of these results (or against `other`, scored
        on the same test items): `probes.compare.compare_probes(self, other, **options)`."""

        return compare_probes(self, other, **options)

    def mdl(self, epsilon: float | None = None) -> pl.DataFrame:
        """Online and uniform codelengths (bits) and compression per site, seed and variant,
        with the loss-data curve (`train_sizes`, `test_bits`: mean test bits per item of the
        probe trained on that many items; 0 items: the uniform code). With `epsilon` (bits per
        item), also the surplus description length `sdl_bits` and the ε-sample complexity
        `epsilon_sample_complexity` (Whitney et al. 2020; `probes.sample_complexity`)."""
        if self.codelengths is None:
            raise ProbeConfigError("no MDL codelengths: fit with ProbeGrid(mdl=True).")
        if epsilon is None:
            return self.codelengths
        return sample_complexity_columns(self.codelengths, epsilon)

    def save(self, directory: str | os.PathLike[str]) -> None:
        """Write the frames as parquet and the weights as safetensors into `directory`, then the
        manifest; until the manifest is written the folder reads as damaged, not as a mixture."""
        out = Path(directory)
        if out.exists() and not out.is_dir():
            raise ProbeConfigError(f"{out} is a file; give ProbeResults.save a folder")
        out.mkdir(parents=True, exist_ok=True)
        (out / MANIFEST).unlink(missing_ok=True)
        sync_folder(out)
        frames = {"probes": self.probes, "metrics": self.metrics}
        if self.codelengths is not None:
            frames["codelengths"] = self.codelengths
        meta = {"kind": self.kind, "head": self.head}
        weights = {n: t.contiguous() for n, t in self.weights.items()}
        contents = {f"{name}.parquet": _parquet_bytes(frame) for name, frame in frames.items()}
        contents[WEIGHTS] = safetensors_bytes(weights, metadata=meta)
        if self.test is not None:
            contents[TEST_FILE] = self.test.to_bytes()
        for name, data in contents.items():
            atomic_write_bytes(out / name, data)
        for name in set(FILES) - set(contents):  # a previous save's file this one lacks
            (out / name).unlink(missing_ok=True)
        files = {
            name: {"bytes": len(data), "xxh3": bytes_digest(data)}
            for name, data in contents.items()
        }
        names = list(self.site_names) if self.site_names is not None else None
        manifest = {
            "format": FORMAT,
            **meta,
            "site_names": names,
            "mask_kind": self.mask_kind,
            "files": files,
        }
        atomic_write_bytes(out / MANIFEST, json.dumps(manifest, indent=2).encode())

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> ProbeResults:
        """Read results written by `save`, after checking every file against the manifest."""
        src = Path(directory)
        if not src.is_dir():
            raise FileNotFoundError(f"{src}: no such results folder")
        manifest = _read_manifest(src)
        data = {name: _verified(src, name, entry) for name, entry in manifest["files"].items()}
        frames = {
            name: pl.read_parquet(io.BytesIO(data[f"{name}.parquet"]))
            for name in FRAMES
            if f"{name}.parquet" in data
        }
        if "probes" not in frames or "metrics" not in frames or WEIGHTS not in data:
            raise ResultsDamagedError(f"{src / MANIFEST} is damaged: it lists no {FILES[:2]}")
        return cls(
            probes=frames["probes"],
            metrics=frames["metrics"],
            weights=safetensors_load(data[WEIGHTS]),
            codelengths=frames.get("codelengths"),
            kind=str(manifest.get("kind", "linear")),
            site_names=_site_names(manifest.get("site_names")),
            mask_kind=MASK_KINDS.get(str(manifest.get("mask_kind")), "train_fraction"),
            head=str(manifest.get("head", "classification")),
            test=(
                TestPredictions.from_bytes(data[TEST_FILE], str(src / TEST_FILE))
                if TEST_FILE in data
                else None
            ),
        )


def _site_names(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def _parquet_bytes(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.write_parquet(buffer)
    return buffer.getvalue()


def _read_manifest(src: Path) -> dict[str, Any]:
    path = src / MANIFEST
    if not path.exists():
        raise ResultsDamagedError(
            f"{src} is damaged or incomplete: it has no {MANIFEST} (a save was interrupted, or"
            " the folder was not written by ProbeResults.save); fit the probes again and save"
        )
    try:
        manifest = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError) as error:
        raise ResultsDamagedError(f"{path} is damaged: not valid JSON ({error})") from None
    files = manifest.get("files") if isinstance(manifest, dict) else None
    ok = manifest.get("format") == FORMAT if isinstance(manifest, dict) else False
    if not ok or not isinstance(files, dict) or not set(files) <= set(FILES):
        raise ResultsDamagedError(
            f"{path} is damaged: expected format {FORMAT!r} listing only {list(FILES)}"
        )
    return manifest


def _verified(src: Path, name: str, entry: Any) -> bytes:
    path = src / name
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ResultsDamagedError(f"{path} is missing: the results folder is damaged") from None
    if not isinstance(entry, dict) or entry.get("bytes") != len(data):
        raise ResultsDamagedError(
            f"{path} is damaged: {len(data)} bytes, the manifest says {entry!r:.80}"
        )
    if entry.get("xxh3") != bytes_digest(data):
        raise ResultsDamagedError(
            f"{path} is damaged: its content changed after it was saved (checksum mismatch)"
        )
    return data
