"""What a tracker logs for one unit (`UnitLog`): tags, settings, headline scores per layer and
files (`suites.sweep.tracking` builds it from a unit and its outcome)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from suites.registry import SUITES
from suites.schema import BASELINE_INIT, score_table

REPORT_SUFFIXES = (".json", ".parquet", ".png", ".svg", ".html", ".csv", ".txt", ".md")
MAX_FILE_BYTES = 64 * 2**20  # larger files of a unit folder stay on disk only


@dataclass(frozen=True)
class Score:
    """One headline score of a unit at one layer (`key`: `TASK/METRIC` or `TASK/selectivity`)."""

    key: str
    layer: int
    value: float


@dataclass(frozen=True)
class UnitLog:
    """Everything a tracker logs for one unit."""

    name: str  # the unit id
    sweep: Path  # the sweep's output folder
    tags: dict[str, str]  # model, suite, group, status
    settings: dict[str, Any]  # what decides the unit's numbers (`unit_identity`), nested
    scores: tuple[Score, ...]
    files: tuple[tuple[Path, str], ...]  # (file, the folder it goes in within the run)
    error: str | None = None  # "Type: message" of a failed unit

    @property
    def ok(self) -> bool:
        """Whether the unit finished."""
        return self.error is None


def metric_key(text: str) -> str:
    """A metric name both trackers take (letters, digits, `_ - . : /` and spaces)."""
    return re.sub(r"[^\w\-.:/ ]", "_", text)


def flat_settings(settings: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested settings as `a.b.c` -> text (lists and other values as JSON)."""
    found: dict[str, str] = {}
    for key, value in settings.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            found |= flat_settings(value, f"{name}.")
        else:
            found[name] = value if isinstance(value, str) else json.dumps(value, default=str)
    return found


def layer_scores(rows: pl.DataFrame, suite: str) -> tuple[Score, ...]:
    """Per task, the suite's headline metric on the test split at every layer (all of train:
    the largest mask), as `suites.sweep.report.headline` picks it at one site; with several
    sites at one layer, the site names the metric."""
    board = score_table(rows.filter(pl.col("init") != BASELINE_INIT))
    test = board.filter((pl.col("split") == "test") & pl.col("layer").is_not_null())
    scores: list[Score] = []
    for (task,), part in test.sort("task").group_by("task", maintain_order=True):
        present = set(part["metric"].to_list())
        metrics = [m for m in SUITES[suite].headline_metrics if m in present]
        if not metrics:
            continue
        chosen = part.filter(pl.col("metric") == metrics[0])
        chosen = chosen.filter(pl.col("mask") == chosen["mask"].max()).sort("layer", "site")
        several = chosen["layer"].is_duplicated().any()
        for site, layer, score, selectivity in chosen.select(
            "site", "layer", "score", "selectivity"
        ).iter_rows():
            where = f"{task}/{site}" if several else str(task)
            if score is not None:
                scores.append(Score(metric_key(f"{where}/{metrics[0]}"), layer, score))
            if selectivity is not None and selectivity == selectivity:
                scores.append(Score(metric_key(f"{where}/selectivity"), layer, selectivity))
    return tuple(scores)


def report_files(folder: Path, where: str) -> list[tuple[Path, str]]:
    """(file, folder in the run) for the report files under `folder` (tables, plots,
    manifests; no tensors, none over `MAX_FILE_BYTES`), below `where` in the run."""
    found: list[tuple[Path, str]] = []
    for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
        small = path.is_file() and path.stat().st_size <= MAX_FILE_BYTES
        if small and path.suffix in REPORT_SUFFIXES:
            inner = path.parent.relative_to(folder).as_posix()
            found.append((path, where if inner == "." else f"{where}/{inner}"))
    return found
