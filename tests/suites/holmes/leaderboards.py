"""Synthetic leaderboards in the published Holmes / FlashHolmes CSV format, for offline tests.

The published files state no licence, so lingprobe does not ship them; these have their columns
(`probing dataset`, `linguistic subfield`, ..., one score column per model) with scores drawn
from a known model order plus noise that grows as the train portion shrinks.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import polars as pl

MODELS = ("org/strong", "org/good", "org/middle", "org/weak", "org/weakest", "org/sparse")
FLASH_ONLY = "org/flash-only"
TYPES = ("morphology", "syntax", "semantics", "reasoning", "discourse")
PORTIONS = tuple(1 / 2**i for i in range(1, 10))  # 1/2 ... 1/512
DATASETS = 30
MISSING = ("org/sparse", "ds-07")  # one score the authors did not report


def _rows(portion: float, models: tuple[str, ...], rng: np.random.Generator) -> list[list[str]]:
    rows = []
    for d in range(DATASETS):
        name = f"ds-{d:02d}"
        kind = TYPES[d % len(TYPES)]
        meta = [str(d), name, kind, f"phenomenon {d // 3}", "sentence classification"]
        scores = []
        for rank, model in enumerate(models):
            quality = 0.9 - 0.1 * rank
            noise = 0.02 / np.sqrt(portion)
            value = quality + rng.normal(0.0, noise)
            scores.append("" if (model, name) == MISSING else f"{value:.4f}")
        rows.append([*meta, f"{portion:g}", name, *scores])
    return rows


def write_leaderboards(folder: Path, seed: int = 0) -> tuple[Path, Path]:
    """(holmes CSV, flash-holmes CSV) in `folder`, in the published format."""
    rng = np.random.default_rng(seed)
    header = [
        "",
        "probing dataset",
        "linguistic subfield",
        "linguistic phenomena",
        "probe type",
        "train portion",
        "probe",
    ]
    holmes, flash = folder / "holmes.csv", folder / "flash-holmes.csv"
    with holmes.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*header, *MODELS])
        writer.writerows(_rows(1.0, MODELS, rng))
    with flash.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*header, *MODELS, FLASH_ONLY])
        for portion in PORTIONS:
            writer.writerows(_rows(portion, (*MODELS, FLASH_ONLY), rng))
    return holmes, flash


def run_board(scores: dict[str, float], model: str = "mine") -> pl.DataFrame:
    """A run's leaderboard in the columns `ranked_scores` reads (one ranked site)."""
    return pl.DataFrame(
        {
            "dataset": list(scores),
            "model": [model] * len(scores),
            "score": list(scores.values()),
            "phenomenon_type": ["syntax"] * len(scores),
            "ranked": [True] * len(scores),
            "fraction": [1.0] * len(scores),
        }
    )
