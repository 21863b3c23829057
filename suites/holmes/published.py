"""The published Holmes and FlashHolmes leaderboards (shared data) as long score frames.

`leaderboard_holmes.csv`: one row per dataset (train portion 1), one column per model with the
score (macro-F1 or Pearson). `leaderboard_flash-holmes.csv`: the same at train portions
1/512 ... 1/2 (several rows per dataset).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from suites.data_paths import data_file, shared_data

HOLMES_FILE = ("holmes", "leaderboard_holmes.csv")
FLASH_FILE = ("holmes", "leaderboard_flash-holmes.csv")
META = {
    "probing dataset": "dataset",
    "linguistic subfield": "phenomenon_type",
    "linguistic phenomena": "phenomenon",
    "probe type": "probe_type",
    "train portion": "fraction",
}
DROPPED = ("", "probe")  # the CSV's row index and a copy of the dataset name


def _long(path: Path) -> pl.DataFrame:
    wide = pl.read_csv(path, infer_schema_length=None)
    models = [c for c in wide.columns if c not in META and c not in DROPPED]
    long = wide.rename(META).unpivot(
        on=models, index=list(META.values()), variable_name="model", value_name="score"
    )
    return long.with_columns(pl.col("fraction").cast(pl.Float64), pl.col("score").cast(pl.Float64))


def published_scores(data: str | Path | None = None) -> pl.DataFrame:
    """Holmes scores: `dataset, phenomenon_type, phenomenon, probe_type, fraction (1.0), model,
    score` for 57 models x 208 datasets (null where the authors report none)."""
    return _long(data_file(shared_data(data), *HOLMES_FILE))


def published_flash_scores(data: str | Path | None = None) -> pl.DataFrame:
    """FlashHolmes scores at train fractions 1/512 ... 1/2, same columns as `published_scores`."""
    return _long(data_file(shared_data(data), *FLASH_FILE))
