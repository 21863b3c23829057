"""From one (model, dataset) probe run to Holmes scores per site and train fraction.

Per (site, train fraction), over the grid's seeds, on the test split:
  score        mean task metric (macro-F1 for classification, Pearson for regression; Holmes §4.4)
  sigma        sample standard deviation of the task metric over seeds (Holmes §4.4 σ)
  control      mean metric of the control-task probes (Hewitt & Liang 2019)
  selectivity  score − control (Holmes §4.4)
  compression  uniform / online codelength of the task probes, mean over seeds (Voita & Titov
               2020; Holmes §4.4); only at fraction 1 of classification tasks run with MDL
"""

from __future__ import annotations

import polars as pl

from internals import Site
from probes.mdl import prefix_size
from suites.probing import ProbeRun

PRIMARY_METRIC = {"class": "macro_f1", "multilabel": "macro_f1", "regression": "pearson"}


def primary_metric(target_type: str) -> str:
    """The Holmes task metric of a target type."""
    return PRIMARY_METRIC[target_type]


def ranked_site(sites: tuple[Site, ...]) -> Site:
    """The site a model is ranked at: the deepest layer run of its first part (Holmes: last)."""
    first = sites[0].part
    return max((s for s in sites if s.part == first), key=lambda s: s.layer)


def unit_scores(run: ProbeRun, fractions: tuple[float, ...], last: Site) -> pl.DataFrame:
    """One row per (site, fraction) with score, sigma, control, selectivity, compression, sizes.

    `last` is the subject's last site (the Holmes choice); `ranked` marks the row used for
    rankings (`ranked_site` of the sites run).
    """
    task = run.task
    metric = primary_metric(task.target_type)
    table = run.table().filter(
        (pl.col("split") == "test")
        & (pl.col("metric") == metric)
        & pl.col("mask").is_in(list(fractions))
    )
    per_seed = table.pivot(
        on="variant", index=["site", "site_name", "layer", "mask", "seed"], values="value"
    )
    if "control" not in per_seed.columns:
        per_seed = per_seed.with_columns(control=pl.lit(None, dtype=pl.Float64))
    scores = per_seed.group_by("site", "site_name", "layer", "mask").agg(
        score=pl.col("task").mean(),
        sigma=pl.col("task").std(),
        control=pl.col("control").mean(),
        selectivity=(pl.col("task") - pl.col("control")).mean(),
        n_seeds=pl.col("seed").n_unique(),
    )
    scores = scores.join(_compression(run), on="site", how="left").with_columns(
        compression=pl.when(pl.col("mask") == 1.0).then(pl.col("compression"))
    )
    sizes = {s: task.split(s).height for s in ("train", "dev", "test")}
    ranked = ranked_site(run.sites).name
    return (
        scores.rename({"mask": "fraction", "site_name": "site_label"})
        .with_columns(
            pl.col("fraction")
            .map_elements(lambda f: prefix_size(f, sizes["train"]), return_dtype=pl.Int64)
            .alias("n_train_used"),
        )
        .select(
            pl.lit(run.task.name).alias("dataset"),
            pl.lit(task.phenomenon).alias("phenomenon"),
            pl.lit(task.phenomenon_type).alias("phenomenon_type"),
            pl.lit(task.input_type).alias("input_type"),
            pl.lit(metric).alias("metric"),
            pl.col("site_label").alias("site"),
            pl.col("site_label").str.split(".").list.first().alias("part"),
            pl.col("layer").cast(pl.Int64),
            (pl.col("site_label") == last.name).alias("is_last"),
            (pl.col("site_label") == ranked).alias("ranked"),
            "fraction",
            "score",
            "sigma",
            "control",
            "selectivity",
            pl.col("compression").cast(pl.Float64),
            pl.col("n_seeds").cast(pl.Int64),
            pl.lit(sizes["train"]).cast(pl.Int64).alias("n_train"),
            "n_train_used",
            pl.lit(sizes["dev"]).cast(pl.Int64).alias("n_dev"),
            pl.lit(sizes["test"]).cast(pl.Int64).alias("n_test"),
        )
        .sort("site", "fraction", descending=[False, True])
    )


def _compression(run: ProbeRun) -> pl.DataFrame:
    """Mean compression of the task probes per grid site (empty when MDL did not run)."""
    empty = pl.DataFrame(schema={"site": pl.Int64, "compression": pl.Float64})
    if run.results.codelengths is None:
        return empty
    return (
        run.results.codelengths.filter(pl.col("variant") == "task")
        .group_by("site")
        .agg(pl.col("compression").mean())
    )
