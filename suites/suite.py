"""The suite contract: what every suite provides, so that the CLI, sweeps and reports run any suite
the same way (`suites.registry` lists them once).

A suite has a name, a frozen config (its own fields plus the probe settings its `probe_fields`
ClassVar names: `("grid", "train")` for a `ProbeGrid` and a `TrainConfig`, or its own regimen),
`units(config, data)` (the resumable units of work of one model: task groups),
`run(config, group, subject, context)` (one unit's rows in `suites.schema.RESULTS_SCHEMA`) and
`report(out)` (tables and plots of a unit folder it wrote). `lingprobe run NAME` and sweeps both
run it through `suites.sweep` (the command's flags come from the config's fields).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import polars as pl

from internals import Subject
from probes import METRICS
from suites.datasets import DataSource
from suites.overrides import OverrideError, apply, apply_probe_settings
from suites.tasks import Task


@dataclass(frozen=True)
class TaskGroup:
    """The tasks one unit runs for one model (features once per task)."""

    name: str
    tasks: tuple[str, ...]


@dataclass(frozen=True)
class Limits:
    """Caps that keep a run small (smoke runs, tests); None = everything. Each means what it says.

    train, dev, test  items per split (whole sentences are kept where items share one)
    sentences         sentences read from each CoNLL-U file (EWT-based tasks)
    blimp_pairs       minimal pairs per BLiMP paradigm
    """

    HELP: ClassVar[dict[str, str]] = {
        "train": "train items per task (whole sentences are kept where items share one)",
        "dev": "dev items per task",
        "test": "test items per task",
        "sentences": "sentences read from each CoNLL-U file",
        "blimp_pairs": "minimal pairs per BLiMP paradigm",
    }

    train: int | None = None
    dev: int | None = None
    test: int | None = None
    sentences: int | None = None
    blimp_pairs: int | None = None

    def __post_init__(self) -> None:
        for cap in dataclasses.fields(self):
            value = getattr(self, cap.name)
            if value is not None and (isinstance(value, bool) or int(value) < 1):
                raise OverrideError(f"limits.{cap.name}={value!r}: give a positive integer")

    def per_split(self) -> dict[str, int | None]:
        """The item caps by split name."""
        return {"train": self.train, "dev": self.dev, "test": self.test}


@dataclass(frozen=True)
class RunContext:
    """Where and how one unit runs: its own output folder, the activation store, the data."""

    out: Path
    store: Path | None = None
    data: DataSource = field(default_factory=DataSource)
    device: str | None = None
    progress: bool = True


class Suite:
    """What a suite provides (see the module doc); subclasses set the class attributes and
    implement `units`, `probes_per_site`, `run` and `report`."""

    name: ClassVar[str]  # the registry name (`lingprobe run NAME`, `[[suites]] suite = NAME`)
    summary: ClassVar[str]  # one line for `--help`
    config_type: ClassVar[type[Any]]  # its frozen config dataclass (declares `probe_fields`)
    manifest_names: ClassVar[tuple[str, ...]] = ()  # the `suite` values of its manifests
    # the metrics its reports lead with (the first one present); names of `probes.metric_table`
    headline_metrics: ClassVar[tuple[str, ...]] = ("accuracy",)
    extra_keys: ClassVar[dict[str, str]] = {}  # sweep keys `table_values` turns into fields
    derived_fields: ClassVar[tuple[str, ...]] = ()  # config fields set from `extra_keys`

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        unknown = [m for m in cls.headline_metrics if m not in METRICS]
        if unknown:
            raise TypeError(
                f"{cls.__name__}.headline_metrics: {unknown} are not in probes.metric_table;"
                f" use some of {list(METRICS)} or add the metric there."
            )

    def table_values(self, table: dict[str, Any], base: Path) -> dict[str, Any]:
        """A sweep `[[suites]]` table's values (or `lingprobe run` flags), ready for the
        config; `base` is the folder relative paths start from. Default: as they are."""
        return dict(table)

    def check(self, config: Any, data: DataSource) -> None:
        """Refuse what cannot run (unknown task names ...) before any model loads.
        Default: everything is checked when the config is built or the unit reads its data."""

    def units(self, config: Any, data: DataSource) -> list[TaskGroup]:
        """The units of work of one model, in order."""
        raise NotImplementedError

    def tasks(self, config: Any, group: TaskGroup, data: DataSource) -> list[Task]:
        """The tasks of one unit as its run builds them (for plans and cost tables). Default:
        none (a suite that builds its items inside the unit)."""
        return []

    def probes_per_site(self, config: Any) -> int:
        """Probes trained per site and task (for cost tables)."""
        raise NotImplementedError

    def run(
        self, config: Any, group: TaskGroup, subject: Subject, context: RunContext
    ) -> pl.DataFrame:
        """Run one unit into `context.out`; its rows (schema columns but model, init, unit)."""
        raise NotImplementedError

    def report(self, out: Path) -> None:
        """Re-render the tables and plots of a unit folder this suite wrote."""
        raise NotImplementedError

    def summarize(self, rows: pl.DataFrame, units: list[Path], out: Path) -> None:
        """Tables and plots of this suite's rows in a sweep (`units`: their unit folders).
        Default: nothing beyond the sweep's own tables."""


def config_from_table(
    suite: Suite,
    table: Mapping[str, Any],
    *,
    probe: Mapping[str, Any] | None = None,
    limits: Limits | None = None,
    where: str = "",
) -> Any:
    """A suite's config from a sweep table (or `lingprobe run` flags): its own fields, then
    probe settings (`suites.overrides.apply_probe_settings`) and limits."""
    config = suite.config_type()
    for reserved in ("limits", *suite.config_type.probe_fields):
        if reserved in table:
            raise OverrideError(f"{where}: set `{reserved}` through [probe] / [limits]")
    config = apply(config, table, where)
    if probe:
        config = apply_probe_settings(config, probe, suite.name, where)
    if limits is not None and hasattr(config, "limits"):
        config = dataclasses.replace(config, limits=limits)
    return config


def identity(config: Any) -> dict[str, Any]:
    """A config as plain JSON-able data (manifests, unit ids)."""
    return dataclasses.asdict(config)


def with_probe(config: Any, **settings: Any) -> Any:
    """`config` (any suite config) with probe settings changed, e.g. `seeds=2, epochs=5`.

    Keys are what a sweep's `[probe]` takes for that suite (`suites.overrides.probe_owners`).
    """
    return apply_probe_settings(config, settings, type(config).__name__)
