"""Planning a sweep: every model x every suite entry's task groups becomes one unit.

A unit's id is readable (model label, suite, group) and ends in a hash of everything that
decides its numbers (model spec, the suite's whole config, the group). A rerun with the same
settings finds the same ids and skips finished units; a changed setting gives new ids, so old
results are never mixed into the new leaderboard.
"""

from __future__ import annotations

from dataclasses import replace

from internals import fingerprint
from suites.outputs import safe_name
from suites.registry import SUITES
from suites.suite import identity
from suites.sweep.config import ModelSpec, SweepConfig
from suites.sweep.errors import SweepConfigError
from suites.sweep.units import Unit, UnitContext, data_source

ID_HASH = 10  # hex digits of the settings hash in a unit id


def unit_id(model_label: str, suite: str, group: str, digest: str) -> str:
    """A unit's id (its folder name): model label, suite, group and the settings hash."""
    return "__".join((safe_name(model_label), suite, safe_name(group), digest))


def unit_identity(unit: Unit) -> dict:
    """What decides a unit's numbers (hashed into its id)."""
    config = identity(unit.config)
    config.pop("groups", None)  # the unit's own group stands for it
    return {
        "model": unit.model.identity(),
        "suite": unit.suite,
        "config": config,
        "group": [unit.group.name, list(unit.group.tasks)],
    }


def plan_units(config: SweepConfig) -> list[Unit]:
    """Every (model, task group) unit of the sweep, grouped by model in config order."""
    source = data_source(config.data, config.trust_local)
    units: list[Unit] = []
    for model in config.models:
        for entry in config.suites:
            for group in SUITES[entry.suite].units(entry.config, source):
                draft = Unit("", model, entry.suite, entry.config, group)
                digest = fingerprint(unit_identity(draft))[:ID_HASH]
                name = unit_id(model.label, entry.suite, group.name, digest)
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
        trust_local=config.trust_local,
        device=config.device,
        threads=config.resources.cpus,
        progress=progress,
    )


def check_tasks(config: SweepConfig) -> None:
    """Refuse what cannot run (unknown task names ...) before any model is loaded."""
    source = data_source(config.data, config.trust_local)
    for i, entry in enumerate(config.suites):
        try:
            SUITES[entry.suite].check(entry.config, source)
        except SweepConfigError:
            raise
        except Exception as error:
            where = f"{config.source or 'the config'}: [[suites]] #{i + 1} ({entry.suite})"
            raise SweepConfigError(f"{where}: {str(error).splitlines()[0]}") from error
