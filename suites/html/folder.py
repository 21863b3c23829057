"""What a results folder holds, read for the explorer: result rows in the one schema (from any
suite's folder or a sweep), the edge and FlashHolmes tables, the manifest and the parquet files."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from suites.errors import ReportError
from suites.schema import RESULTS_SCHEMA, conform

SKIP = {"store", "plots"}  # folders that hold no tables
TABLES = ("heuristics", "drops", "pretrained_vs_random", "pretrained_vs_random_tests", "flash")


@dataclass(frozen=True)
class ResultsFolder:
    """A folder's rows (`RESULTS_SCHEMA`), named extra tables, manifest and parquet files."""

    root: Path
    rows: pl.DataFrame
    tables: dict[str, pl.DataFrame] = field(default_factory=dict)
    intervals: pl.DataFrame | None = None  # edge `scores_ci`: ci_low/ci_high per score
    manifest: dict[str, Any] = field(default_factory=dict)
    files: tuple[Path, ...] = ()


def parquet_files(root: Path) -> list[Path]:
    """Every parquet file under `root` (activation stores and plots left out), sorted."""
    found = []
    for path in sorted(root.rglob("*.parquet")):
        if not SKIP & set(path.relative_to(root).parts[:-1]):
            found.append(path)
    return found


def read_folder(root: Path) -> ResultsFolder:
    """Read a folder written by `lingprobe run ...`, `demo` or `sweep`."""
    files = parquet_files(root)
    top = [p for p in files if p.parent == root]
    rows = _schema_rows(top) or _schema_rows(files) or _adapted_rows(files)
    if not rows:
        raise ReportError(
            f"{root} holds no result rows (results.parquet, all_scores.parquet, structural.parquet"
            " or a suite's per-layer tables); give a folder written by lingprobe run, demo or sweep"
        )
    tables = {p.stem: read_table(p) for p in top if p.stem in TABLES}
    ci = root / "scores_ci.parquet"
    manifest_path = root / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    return ResultsFolder(
        root,
        pl.concat(rows, how="vertical_relaxed").unique(maintain_order=True),
        tables,
        read_table(ci) if ci.exists() else None,
        manifest if isinstance(manifest, dict) else {},
        tuple(files),
    )


def read_table(path: Path) -> pl.DataFrame:
    """A parquet file of the folder; a damaged or truncated one is refused by name. Read from
    an open file, so a name with glob characters (`[`, `*`) means that file alone."""
    try:
        with path.open("rb") as handle:
            return pl.read_parquet(handle)
    except (Exception, pl.exceptions.PanicException) as error:  # polars raises several kinds
        raise _damaged(path, error) from None


def _columns(path: Path) -> list[str]:
    try:
        with path.open("rb") as handle:
            return list(pl.read_parquet_schema(handle))
    except (Exception, pl.exceptions.PanicException) as error:
        raise _damaged(path, error) from None


def _damaged(path: Path, error: BaseException) -> ReportError:
    reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return ReportError(
        f"{path} cannot be read as parquet ({reason}): it is damaged or truncated; rerun the"
        " command that wrote the folder, or move the file out of it"
    )


def _schema_rows(paths: list[Path]) -> list[pl.DataFrame]:
    frames = []
    for path in paths:
        if set(RESULTS_SCHEMA) <= set(_columns(path)):
            frames.append(read_table(path).select(list(RESULTS_SCHEMA)))
    return [f.cast(RESULTS_SCHEMA) for f in frames]  # type: ignore[arg-type]


def _adapted_rows(paths: list[Path]) -> list[pl.DataFrame]:
    """Rows from suites whose CLI folders keep their own tables (CC layers, curriculum curves)."""
    frames = []
    for path in paths:
        table = read_table(path)
        if path.name == "layers.parquet" and {"feature", "accuracy", "layer"} <= set(table.columns):
            frames.append(_cc_rows(table))
        elif path.name == "inoculation.parquet" and "n_per_label" in table.columns:
            frames.append(_curriculum_rows(table))
    return frames


def _cc_rows(table: pl.DataFrame) -> pl.DataFrame:
    rows = table.select(
        "model",
        "init",
        "layer",
        "seed",
        task=pl.lit("cc:") + pl.col("feature"),
        site="site_name",
        value="accuracy",
    )
    return conform(
        rows,
        suite="cc",
        phenomenon="comparative correlative",
        phenomenon_type="syntax",
        variant="task",
        mask=1.0,
        split="test",
        metric="accuracy",
        unit="",
    )


def _curriculum_rows(table: pl.DataFrame) -> pl.DataFrame:
    largest = table.filter(pl.col("n_per_label") == pl.col("n_per_label").max())
    model = largest["model"] if "model" in largest.columns else None
    rows = largest.filter(pl.col("input") == "pair") if "input" in largest.columns else largest
    rows = rows.select(
        "layer",
        "seed",
        "split",
        "metric",
        "value",
        task=pl.lit("curriculum-") + pl.col("phenomenon"),
        phenomenon="phenomenon",
        site="site_name",
    )
    return conform(
        rows,
        model=model[0] if model is not None else "model",
        init="pretrained",
        suite="curriculum",
        phenomenon_type="reasoning",
        variant="task",
        mask=1.0,
        unit="",
    )
