"""From one (model, dataset) probe run to result rows, and from rows to the Holmes leaderboard.

A unit's rows (`suites.schema.RESULTS_SCHEMA`) hold every probe's metrics plus two kinds of
Holmes rows: `compression` (uniform / online codelength of each MDL probe, Voita & Titov 2020;
Holmes §4.4; split "train", mask 1) and `n_items` (the items each probe trained on (its train
fraction's prefix), and the dev and test sizes). `leaderboard` reads rows back into one row per
(model, dataset, site, train fraction), with the scores of `suites.schema.score_table`:

  score        mean test metric over seeds (macro-F1 for classification, Pearson for
               regression; Holmes §4.4), sigma its standard deviation over seeds
  control      mean metric of the control-task probes; selectivity = score − control, per seed
  compression  mean over seeds of the task probes' compression (fraction 1 only)
  ranked       the site the model is ranked at (Holmes §4.3: the last layer run)
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from internals import Site
from probes import prefix_size
from suites.probing import ProbeRun
from suites.schema import conform, score_table

SUITE = "holmes"
PRIMARY_METRIC = {"classification": "macro_f1", "multilabel": "macro_f1", "regression": "pearson"}
COUNT, COMPRESSION = "n_items", "compression"


def ranked_site(sites: Sequence[str | Site]) -> str:
    """The site a model is ranked at (Holmes §4.3: the last layer; an encoder-decoder's encoder).

    The deepest layer of the encoder when the sites have one, else of the only part.
    """
    names = [s.name if isinstance(s, Site) else s for s in sites]
    parts = [n.split(".")[0] for n in names]
    part = "encoder" if "encoder" in parts else parts[0]
    return max((n for n in names if n.split(".")[0] == part), key=lambda n: int(n.split(".")[1]))


def unit_rows(run: ProbeRun, fractions: tuple[float, ...], unit: str = "") -> pl.DataFrame:
    """Every probe's metrics at the train `fractions`, compression (the MDL block probes'
    summary) and item counts of one run, in the results schema."""
    rows = run.rows(SUITE, unit).filter(pl.col("mask").is_in(list(fractions)))
    labels = {
        "model": run.model,
        "init": run.init,
        "suite": SUITE,
        "task": run.task.name,
        "phenomenon": run.task.phenomenon,
        "phenomenon_type": run.task.phenomenon_type,
        "unit": unit,
    }
    probes = rows.select("site", "layer", "seed", "variant", "mask").unique(maintain_order=True)
    sizes = {s: run.task.split(s).height for s in ("train", "dev", "test")}
    counts = pl.concat(
        probes.with_columns(
            split=pl.lit(split),
            metric=pl.lit(COUNT),
            value=(
                pl.col("mask").map_elements(
                    lambda f: float(prefix_size(f, sizes["train"])), return_dtype=pl.Float64
                )
                if split == "train"
                else pl.lit(float(sizes[split]))
            ),
        )
        for split in sizes
    )
    parts = [rows, conform(counts, **labels)]
    if run.results.codelengths is not None:
        names = {i: s for i, s in enumerate(run.sites)}
        code = run.results.codelengths.select(
            site=pl.col("site").replace_strict({i: s.name for i, s in names.items()}),
            layer=pl.col("site").replace_strict({i: s.layer for i, s in names.items()}),
            seed="seed",
            variant="variant",
            mask=pl.lit(1.0),
            split=pl.lit("train"),
            metric=pl.lit(COMPRESSION),
            value=pl.col("compression").cast(pl.Float64),
        )
        parts.append(conform(code, **labels))
    return pl.concat(parts)


def kind_of(parts: set[str]) -> str:
    """encoder, decoder, encoder-decoder or static, from the parts of the sites run."""
    return "encoder-decoder" if {"encoder", "decoder"} <= parts else next(iter(sorted(parts)))


def leaderboard(rows: pl.DataFrame) -> pl.DataFrame:
    """One row per (model, dataset, site, fraction) of result rows (see the module doc)."""
    scores = score_table(rows)
    metrics = scores.group_by("task").agg(pl.col("metric").unique())
    primary = {
        task: ("pearson" if "pearson" in ms else "macro_f1") for task, ms in metrics.iter_rows()
    }
    keys = ["model", "init", "task", "site"]
    board = scores.filter(
        (pl.col("split") == "test")
        & (pl.col("metric") == pl.col("task").replace_strict(primary, default=None))
    )
    counts = scores.filter(pl.col("metric") == COUNT)
    used = counts.filter(pl.col("split") == "train").select(*keys, "mask", n_train_used="score")
    full = counts.filter(pl.col("mask") == 1.0).pivot(
        on="split", index=keys, values="score", aggregate_function="first"
    )
    compression = scores.filter((pl.col("metric") == COMPRESSION) & (pl.col("mask") == 1.0)).select(
        *keys, compression="score"
    )
    sites = board.group_by("model", "task").agg(pl.col("site").unique())
    ranked = {
        (m, t): ranked_site(list(s))
        for m, t, s in sites.select("model", "task", "site").iter_rows()
    }
    kinds = {
        (m, t): kind_of({x.split(".")[0] for x in s})
        for m, t, s in sites.select("model", "task", "site").iter_rows()
    }
    return (
        board.join(used, on=[*keys, "mask"], how="left")
        .join(
            full.rename({"train": "n_train", "dev": "n_dev", "test": "n_test"}), on=keys, how="left"
        )
        .join(compression, on=keys, how="left")
        .with_columns(
            compression=pl.when(pl.col("mask") == 1.0).then(pl.col("compression")),
            ranked=pl.struct("model", "task", "site").map_elements(
                lambda r: ranked[(r["model"], r["task"])] == r["site"], return_dtype=pl.Boolean
            ),
            kind=pl.struct("model", "task").map_elements(
                lambda r: kinds[(r["model"], r["task"])], return_dtype=pl.String
            ),
        )
        .select(
            "model",
            "init",
            "kind",
            pl.col("task").alias("dataset"),
            "phenomenon",
            "phenomenon_type",
            "metric",
            "site",
            pl.col("site").str.split(".").list.first().alias("part"),
            "layer",
            "ranked",
            pl.col("mask").alias("fraction"),
            "score",
            "sigma",
            "control",
            "selectivity",
            "compression",
            "n_seeds",
            *(pl.col(c).cast(pl.Int64) for c in ("n_train", "n_train_used", "n_dev", "n_test")),
            "unit",
        )
        .sort("model", "dataset", "site", "fraction", descending=[False, False, False, True])
    )
