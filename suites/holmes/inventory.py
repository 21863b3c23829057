"""The Holmes dataset inventory: for each of the 208 probing datasets its phenomenon and type.

`holmes_datasets()` reads the list shipped next to this module (`holmes_datasets.tsv`: the
leaderboard's four metadata columns, names and tags only, no scores); `inventory_frame` derives
the same from the published leaderboard (`holmes-leaderboards` in the dataset registry, fetched on
first use: it states no licence, so lingprobe does not ship it), whose metadata columns name each
dataset's linguistic subfield (= phenomenon type), phenomenon and probe type.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import polars as pl

from suites.datasets import DataError, DataSource
from suites.holmes.published import published_scores

log = logging.getLogger(__name__)
# Holmes (Waldis et al. 2024) §2: the five phenomenon types.
PHENOMENON_TYPES = ("morphology", "syntax", "semantics", "reasoning", "discourse")


@dataclass(frozen=True)
class InventoryEntry:
    """One Holmes dataset's place in the benchmark."""

    dataset: str
    phenomenon: str
    phenomenon_type: str
    probe_type: str  # e.g. "token(s) pair classification"


def holmes_datasets() -> pl.DataFrame:
    """The 208 leaderboard datasets: dataset, phenomenon_type, phenomenon, probe_type (shipped)."""
    text = resources.files("suites.holmes").joinpath("holmes_datasets.tsv").read_text("utf-8")
    rows = [line.split("\t") for line in text.splitlines()[1:] if line.strip()]
    return pl.DataFrame(
        rows, schema=["dataset", "phenomenon_type", "phenomenon", "probe_type"], orient="row"
    )


def shipped_tags(dataset: str) -> tuple[str, str, str]:
    """(phenomenon type, phenomenon, probe type) of a leaderboard dataset, from the shipped list."""
    rows = holmes_datasets().filter(pl.col("dataset") == dataset)
    if rows.height == 0:
        raise KeyError(f"{dataset!r} is not a Holmes leaderboard dataset")
    _, kind, phenomenon, probe_type = rows.row(0)
    return kind, phenomenon, probe_type


def inventory_frame(data: DataSource | str | Path | None = None) -> pl.DataFrame:
    """The inventory as `dataset, phenomenon_type, phenomenon, probe_type` (208 rows)."""
    return (
        published_scores(data)
        .select("dataset", "phenomenon_type", "phenomenon", "probe_type")
        .unique(maintain_order=True)
        .sort("dataset")
    )


def lookup(dataset: str, data: DataSource | str | Path | None = None) -> InventoryEntry | None:
    """The inventory entry of a Holmes dataset name (e.g. `blimp-adjunct_island`).

    None when the name is not in the inventory, or (with a warning) when the published
    leaderboard that holds the inventory cannot be had here.
    """
    try:
        frame = inventory_frame(data)
    except DataError as error:
        log.warning("no Holmes inventory, so %s is untagged: %s", dataset, error)
        return None
    rows = frame.filter(pl.col("dataset") == dataset)
    if rows.height == 0:
        return None
    return InventoryEntry(**rows.row(0, named=True))
