"""Planning a sweep: every model x every dataset group becomes one unit with a stable id.

A unit's id is readable (model label, suite, group) and ends in a hash of everything that
decides its numbers (model spec, tasks, probe settings, limits, layers). A rerun with the same
settings finds the same ids and skips finished units; a changed setting gives new ids, so old
results are never mixed into the new leaderboard.
"""

from __future__ import annotations

import re
from dataclasses import replace
from types import ModuleType

from internals.store import fingerprint
from suites.sweep import edge_units, holmes_units
from suites.sweep.config import HolmesEntry, ModelSpec, SweepConfig
from suites.sweep.errors import SweepConfigError
from suites.sweep.units import Unit, UnitContext

SUITE_UNITS: dict[str, ModuleType] = {"holmes": holmes_units, "edge": edge_units}
ID_HASH = 10  # hex digits of the settings hash in a unit id


def suite_units(suite: str) -> ModuleType:
    """The module that runs, describes and identifies units of `suite`."""
    return SUITE_UNITS[suite]


def safe_name(text: str) -> str:
    """`text` as a file-name part (other characters become `_`)."""
    return re.sub(r"[^A-Za-z0-9._@=+-]+", "_", text).strip("_") or "_"


def unit_identity(unit: Unit, seed: int) -> dict:
    """What decides a unit's numbers (hashed into its id); `seed` is the sweep's RNG seed."""
    return {
        "seed": seed,
        "model": unit.model.identity(),
        "suite": unit.suite,
        **suite_units(unit.suite).identity(unit),
    }


def plan_units(config: SweepConfig) -> list[Unit]:
    """Every (model, dataset group) unit of the sweep, grouped by model in config order."""
    units: list[Unit] = []
    for model in config.models:
        for entry in config.suites:
            probe = entry.probe.over(config.probe)
            for group in entry.groups:
                draft = Unit("", model, entry, group, probe, config.limits)
                digest = fingerprint(unit_identity(draft, config.seed))[:ID_HASH]
                name = "__".join(
                    (safe_name(model.label), entry.suite, safe_name(group.name), digest)
                )
                units.append(replace(draft, id=name))
    ids = [u.id for u in units]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise SweepConfigError(
            f"{config.source or 'the config'}: units {repeated[:3]} are planned twice (the same"
            " model, suite entry and group); give each [[suites]] entry or group once, or set"
            " different names"
        )
    return units


def by_model(units: list[Unit]) -> list[tuple[ModelSpec, list[Unit]]]:
    """Units grouped by model, in plan order (each model is loaded once for its group)."""
    groups: dict[ModelSpec, list[Unit]] = {}
    for unit in units:
        groups.setdefault(unit.model, []).append(unit)
    return list(groups.items())


def context_of(config: SweepConfig, *, progress: bool) -> UnitContext:
    """The `UnitContext` of a sweep."""
    return UnitContext(
        out=config.out,
        store=config.store_path,
        data=config.data,
        device=config.device,
        threads=config.resources.cpus,
        seed=config.seed,
        progress=progress,
    )


def check_tasks(config: SweepConfig) -> None:
    """Refuse unknown task names before any model is loaded (edge files: when parsing)."""
    for entry in config.suites:
        if isinstance(entry, HolmesEntry):
            holmes_units.check(entry, config.data)
