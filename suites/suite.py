"""The suite contract: what every suite provides, so that the CLI, sweeps and reports run any suite
the same way (`suites.registry` lists them once).

A suite has a name, a frozen `Config` (a `grid: ProbeGrid` and a `train: TrainConfig`, or a
logistic-regression config, plus its own fields only), `units(config, data)` (the resumable
units of work of one model: task groups), `run(config, group, subject, context)` (one unit's rows
in `suites.schema.RESULTS_SCHEMA`), `report(out)` (tables and plots of a folder it wrote) and
`register(parsers)` (its `lingprobe run ...` command).
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import polars as pl

from internals import Site, Subject
from suites.datasets import DataSource
from suites.overrides import OverrideError, apply, apply_probe
from suites.tasks import Task

OWN_PROBES = ("logistic", "structural")  # config fields of suites whose probes are no ProbeGrid


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


@runtime_checkable
class Suite(Protocol):
    """What a suite provides (see the module doc)."""

    @property
    def name(self) -> str:
        """The registry name (`lingprobe run NAME`, `[[suites]] suite = NAME`)."""
        ...

    @property
    def summary(self) -> str:
        """One line for `--help`."""
        ...

    @property
    def config_type(self) -> type[Any]:
        """Its frozen config dataclass."""
        ...

    @property
    def aliases(self) -> Mapping[str, str]:
        """Sweep keys older configs used -> config fields."""
        ...

    @property
    def manifest_names(self) -> Sequence[str]:
        """The `suite` values of the manifests it writes (`lingprobe report`)."""
        ...

    @property
    def headline_metrics(self) -> Sequence[str]:
        """The metric its tables lead with (the first one present)."""
        ...

    def table_values(self, table: dict[str, Any], base: Path) -> dict[str, Any]:
        """A sweep `[[suites]]` table's values, ready for the config (paths, groups)."""
        ...

    def check(self, config: Any, data: DataSource) -> None:
        """Refuse what cannot run (unknown task names ...) before any model loads."""
        ...

    def units(self, config: Any, data: DataSource) -> list[TaskGroup]:
        """The units of work of one model, in order."""
        ...

    def tasks(self, config: Any, group: TaskGroup, data: DataSource) -> list[Task]:
        """The tasks of one unit as its run builds them (for plans and cost tables)."""
        ...

    def probes_per_site(self, config: Any) -> int:
        """Probes trained per site and task (for cost tables)."""
        ...

    def run(
        self, config: Any, group: TaskGroup, subject: Subject, context: RunContext
    ) -> pl.DataFrame:
        """Run one unit into `context.out`; its rows (schema columns but model, init, unit)."""
        ...

    def report(self, out: Path) -> None:
        """Re-render the tables and plots of a folder this suite wrote."""
        ...

    def summarize(self, rows: pl.DataFrame, units: list[Path], out: Path) -> None:
        """Tables and plots of this suite's rows in a sweep (`units`: their unit folders)."""
        ...

    def register(self, parsers: argparse._SubParsersAction) -> None:
        """Add this suite's `lingprobe run ...` command(s)."""
        ...


def config_from_table(
    suite: Suite,
    table: Mapping[str, Any],
    *,
    probe: Mapping[str, Any] | None = None,
    limits: Limits | None = None,
    aliases: Mapping[str, str] | None = None,
    where: str = "",
) -> Any:
    """A suite's config from a sweep table: its own fields, then probe settings and limits.

    Own fields and their values come from the config dataclass (`suites.overrides.apply`);
    `probe` keys are `ProbeGrid`/`TrainConfig` fields; `aliases` maps older key names.
    """
    config = suite.config_type()
    own = {(aliases or {}).get(k, k): v for k, v in table.items()}
    for reserved in ("grid", "train", "limits", *OWN_PROBES):
        if reserved in own:
            raise OverrideError(f"{where}: set `{reserved}` through [probe] / [limits]")
    config = apply(config, own, where)
    if probe and hasattr(config, "grid"):
        grid, train = apply_probe(config.grid, config.train, probe, where)
        config = dataclasses.replace(config, grid=grid, train=train)
    elif probe:
        for owner in (o for o in OWN_PROBES if hasattr(config, o)):
            settings = apply(getattr(config, owner), probe, where)
            config = dataclasses.replace(config, **{owner: settings})
    if limits is not None and hasattr(config, "limits"):
        config = dataclasses.replace(config, limits=limits)
    return config


def identity(config: Any) -> dict[str, Any]:
    """A config as plain JSON-able data (manifests, unit ids)."""
    return dataclasses.asdict(config)


def ranked_site(sites: Sequence[str | Site]) -> str:
    """The site a model is ranked at (Holmes §4.3: the last layer; an encoder-decoder's encoder).

    The deepest layer of the encoder when the sites have one, else of the only part.
    """
    names = [s.name if isinstance(s, Site) else s for s in sites]
    parts = [n.split(".")[0] for n in names]
    part = "encoder" if "encoder" in parts else parts[0]
    return max((n for n in names if n.split(".")[0] == part), key=lambda n: int(n.split(".")[1]))


def with_probe(config: Any, **settings: Any) -> Any:
    """`config` (any suite config) with probe settings changed, e.g. `seeds=2, epochs=5`.

    Keys are fields of `probes.ProbeGrid` or `probes.TrainConfig`, as in a sweep's `[probe]`.
    """
    grid, train = apply_probe(config.grid, config.train, settings)
    return dataclasses.replace(config, grid=grid, train=train)
