"""The published Holmes and FlashHolmes leaderboards as long score frames.

`leaderboard_holmes.csv`: one row per dataset (train portion 1), one column per model with the
score (macro-F1 or Pearson). `leaderboard_flash-holmes.csv`: the same at train portions
1/512 ... 1/2 (several rows per dataset). Both come from `holmes-leaderboards` in the dataset
registry (fetched on first use and cached; `data=` as for every suite).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from suites.datasets import DataSource, as_source
from suites.holmes.flash import N_BOOT, reliability_efficiency

DATASET = "holmes-leaderboards"
META = {
    "probing dataset": "dataset",
    "linguistic subfield": "phenomenon_type",
    "linguistic phenomena": "phenomenon",
    "probe type": "probe_type",
    "train portion": "fraction",
}
DROPPED = ("", "probe")  # the CSV's row index and a copy of the dataset name


def read_leaderboard(path: str | Path) -> pl.DataFrame:
    """A leaderboard CSV in the published Holmes format as a long frame (`published_scores`)."""
    wide = pl.read_csv(path, infer_schema_length=None)
    models = [c for c in wide.columns if c not in META and c not in DROPPED]
    long = wide.rename(META).unpivot(
        on=models, index=list(META.values()), variable_name="model", value_name="score"
    )
    return long.with_columns(pl.col("fraction").cast(pl.Float64), pl.col("score").cast(pl.Float64))


def published_scores(
    data: DataSource | str | Path | None = None, *, path: str | Path | None = None
) -> pl.DataFrame:
    """Holmes scores: `dataset, phenomenon_type, phenomenon, probe_type, fraction (1.0), model,
    score` for 57 models x 208 datasets (null where the authors report none).

    `path` reads another leaderboard file in the same format instead (e.g. a newer release).
    """
    return read_leaderboard(path if path is not None else as_source(data).path(DATASET, "holmes"))


def published_flash_scores(
    data: DataSource | str | Path | None = None, *, path: str | Path | None = None
) -> pl.DataFrame:
    """FlashHolmes scores at train fractions 1/512 ... 1/2, same columns as `published_scores`."""
    source = path if path is not None else as_source(data).path(DATASET, "flash-holmes")
    return read_leaderboard(source)


def published_curve(
    data: DataSource | str | Path | None = None,
    *,
    holmes_file: str | Path | None = None,
    flash_file: str | Path | None = None,
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> pl.DataFrame:
    """The reliability-efficiency curve of the published Holmes vs FlashHolmes leaderboards."""
    full = published_scores(data, path=holmes_file)
    reduced = published_flash_scores(data, path=flash_file)
    return reliability_efficiency(full, reduced, n_boot=n_boot, seed=seed)
