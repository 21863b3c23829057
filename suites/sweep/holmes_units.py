"""Holmes units of a sweep: one model on one dataset group, as a Holmes run in its own folder.

The unit is `suites.holmes.run_holmes` on one subject and the group's tasks (without the
per-run rankings and plots, which the sweep's report draws once over all units), so its
numbers are exactly those of `lingprobe run holmes` with the same settings.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import polars as pl

from internals import Subject
from probes import TrainConfig
from suites.holmes.catalog import TaskLimits, available_tasks, build_tasks, expand_names
from suites.holmes.release import SAMPLES
from suites.holmes.run import HolmesConfig, run_holmes
from suites.sweep.config import HolmesEntry
from suites.sweep.errors import SweepConfigError
from suites.sweep.units import Unit, UnitContext
from suites.tasks import Task

TRAIN_KEYS = ("epochs", "lr", "batch_size", "dropout")


def holmes_config(unit: Unit) -> HolmesConfig:
    """The unit's `HolmesConfig`: Holmes defaults, overridden by the sweep's probe settings."""
    assert isinstance(unit.entry, HolmesEntry)
    given = unit.probe.given()
    train = TrainConfig(**{k: given[k] for k in TRAIN_KEYS if k in given})
    changes: dict[str, Any] = {k: given[k] for k in ("seeds", "control", "mdl") if k in given}
    if "fractions" in given:
        changes["fractions"] = (1.0, *given["fractions"])
    limits = unit.limits
    return HolmesConfig(
        layers=unit.entry.layers,
        train=train,
        limits=TaskLimits(limits.train, limits.dev, limits.test, limits.blimp_pairs),
        model_seed=unit.model.seed,
        **changes,
    )


def identity(unit: Unit) -> dict[str, Any]:
    """Everything that decides the unit's numbers besides the model."""
    return {"tasks": list(unit.group.tasks), "holmes": holmes_config(unit).identity()}


def tasks(unit: Unit, context: UnitContext) -> list[Task]:
    """The unit's tasks as the run builds them (groups such as `ewt` expanded)."""
    config = holmes_config(unit)
    return build_tasks(
        list(unit.group.tasks), context.data, limits=config.limits, seed=config.split_seed
    )


def run(unit: Unit, subject: Subject, context: UnitContext) -> pl.DataFrame:
    """Run the unit into its folder; its Holmes leaderboard rows (test split)."""
    board = run_holmes(
        [subject],
        list(unit.group.tasks),
        context.folder(unit.id),
        config=holmes_config(unit),
        data=context.data,
        store=context.store,
        device=context.device,
        progress=context.progress,
        summary=False,
    )
    return board.with_columns(test_set=pl.lit("test"))


def check(entry: HolmesEntry, data: Path | str | None) -> None:
    """Refuse task names the data does not have (before any model is loaded)."""
    known = available_tasks(data)
    for group in entry.groups:
        for name in group.tasks:
            is_group = expand_names([name], data) != [name]
            if name not in known and not is_group and not (Path(name) / SAMPLES).exists():
                close = difflib.get_close_matches(name, known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise SweepConfigError(
                    f"[[suites]] holmes task {name!r} is unknown{hint}; use a name from"
                    " `lingprobe run holmes --list-tasks`, a group (blimp, ewt, curriculum) or"
                    f" a folder holding {SAMPLES}"
                )
