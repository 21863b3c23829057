"""The Holmes dataset inventory: for each of the 208 probing datasets its phenomenon and type.

Read from `holmes/holmes_probing_datasets.tsv` in the shared data (columns `probing_dataset`,
`linguistic_subfield` = phenomenon type, `linguistic_phenomenon`, `probe_type`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import polars as pl

from suites.data_paths import DataNotFoundError, data_file, shared_data

INVENTORY_FILE = ("holmes", "holmes_probing_datasets.tsv")
# Holmes (Waldis et al. 2024) §2: the five phenomenon types.
PHENOMENON_TYPES = ("morphology", "syntax", "semantics", "reasoning", "discourse")


@dataclass(frozen=True)
class InventoryEntry:
    """One Holmes dataset's place in the benchmark."""

    dataset: str
    phenomenon: str
    phenomenon_type: str
    probe_type: str  # e.g. "token(s) pair classification"


def inventory_frame(data: str | Path | None = None) -> pl.DataFrame:
    """The inventory as `dataset, phenomenon_type, phenomenon, probe_type`."""
    return _read(str(data_file(shared_data(data), *INVENTORY_FILE)))


@cache
def _read(path: str) -> pl.DataFrame:
    frame = pl.read_csv(path, separator="\t", infer_schema=False)
    return frame.select(
        pl.col("probing_dataset").alias("dataset"),
        pl.col("linguistic_subfield").alias("phenomenon_type"),
        pl.col("linguistic_phenomenon").alias("phenomenon"),
        pl.col("probe_type"),
    )


def lookup(dataset: str, data: str | Path | None = None) -> InventoryEntry | None:
    """The inventory entry of a Holmes dataset name (e.g. `blimp-adjunct_island`).

    None when the name is not in the inventory or no shared data folder holds the inventory.
    """
    try:
        frame = inventory_frame(data)
    except DataNotFoundError:
        return None
    rows = frame.filter(pl.col("dataset") == dataset)
    if rows.height == 0:
        return None
    return InventoryEntry(**rows.row(0, named=True))
