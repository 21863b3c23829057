"""Pretrained against random across units: each edge unit (one model on one task) keeps its
probes' test predictions, and the suite's summary pairs a model's unit with its random twin's
on the same task for the paired test (`suites.edge.intervals.compare_inits`), as one run of
both subjects does."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from internals import Site
from lingprobe.atomic import atomic_write_bytes
from probes import TestPredictions
from suites.edge.intervals import ScoredSet, compare_inits
from suites.outputs import read_manifest, write_table
from suites.schema import site_columns

PREDICTIONS = "predictions"
SITES = "sites.parquet"


def save_predictions(out: Path, scored: Mapping[str, ScoredSet], sites: Sequence[Site]) -> None:
    """A unit's probe tables and test predictions per test set, and its sites."""
    folder = out / PREDICTIONS
    for name, each in scored.items():
        write_table(each.probes, folder / f"{name}.probes.parquet")
        atomic_write_bytes(folder / f"{name}.test.safetensors", each.test.to_bytes())
    write_table(site_columns(sites), folder / SITES)


def load_predictions(unit: Path) -> dict[str, ScoredSet]:
    """The scored test sets a unit saved (empty when it kept none)."""
    folder = unit / PREDICTIONS
    found = {}
    for probes in sorted(folder.glob("*.probes.parquet")):
        name = probes.name.removesuffix(".probes.parquet")
        test = folder / f"{name}.test.safetensors"
        found[name] = ScoredSet(
            pl.read_parquet(probes), TestPredictions.from_bytes(test.read_bytes(), str(test))
        )
    return found


def compare_twins(units: Mapping[Path, tuple[str, str]]) -> pl.DataFrame:
    """Pretrained minus random for every (model, task) with both units among `units`
    (unit folder -> (model, init)); empty when none pairs up."""
    by_key: dict[tuple[str, str], dict[str, Path]] = {}
    for unit, (model, init) in units.items():
        manifest = read_manifest(unit)
        if not (unit / PREDICTIONS / SITES).exists():
            continue
        by_key.setdefault((model, manifest["tasks"][0]), {})[init] = unit
    parts = []
    for (model, task), pair in sorted(by_key.items()):
        if set(pair) != {"pretrained", "random"}:
            continue
        manifest = read_manifest(pair["pretrained"])
        settings = manifest["settings"]
        if settings.get("ci") is None:
            continue
        parts.append(
            compare_inits(
                model,
                task,
                load_predictions(pair["pretrained"]),
                load_predictions(pair["random"]),
                pl.read_parquet(pair["pretrained"] / PREDICTIONS / SITES),
                manifest["metric"],
                ci=settings["ci"],
                n_resamples=settings["n_resamples"],
                seed=settings["heuristic_seed"],
            )
        )
    full = [p for p in parts if p.height]
    return pl.concat(full) if full else pl.DataFrame()
