"""Units of work and what they report back: a unit is one model x one dataset group.

A `Unit` and its `UnitContext` travel to whichever worker runs it (this process or a Ray
worker); the worker sends a `UnitOutcome` back: the unit's leaderboard rows, or its error.
"""

from __future__ import annotations

import os
import socket
import traceback as tb
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from suites.datasets import DataSource, as_source
from suites.suite import RunContext, TaskGroup
from suites.sweep.config import ModelSpec

UNITS = "units"


@dataclass(frozen=True)
class Unit:
    """One (model, task group) of one suite entry: features once per task, then the probes."""

    id: str  # stable: label, suite, group and a hash of everything that decides its numbers
    model: ModelSpec
    suite: str  # a name of `suites.registry.SUITES`
    config: Any  # that suite's frozen config
    group: TaskGroup

    @property
    def title(self) -> str:
        """A short name for progress lines."""
        return f"{self.model.label} · {self.suite} · {self.group.name}"


@dataclass(frozen=True)
class UnitContext:
    """Where and how units run (the same for every unit of a sweep)."""

    out: Path
    store: Path
    data: Path | str | None = None  # as `suites.datasets.as_source` takes it
    trust_local: bool = False  # `suites.datasets.DataSource.trust_local`
    device: str | None = None
    threads: int = 1
    progress: bool = True  # the unit's own bars (features, probes)

    def folder(self, unit_id: str) -> Path:
        """The suite's own output folder for one unit."""
        return self.out / UNITS / unit_id

    def run_context(self, unit_id: str) -> RunContext:
        """What the suite's `run` gets for one unit."""
        return RunContext(
            out=self.folder(unit_id),
            store=self.store,
            data=data_source(self.data, self.trust_local),
            device=self.device,
            progress=self.progress,
        )


@dataclass(frozen=True)
class UnitError:
    """A unit's exception: type, message and formatted traceback."""

    type: str
    message: str
    traceback: str

    @classmethod
    def of(cls, error: BaseException) -> UnitError:
        """The record of a caught exception."""
        text = "".join(tb.format_exception(type(error), error, error.__traceback__))
        return cls(type(error).__name__, str(error).strip() or type(error).__name__, text)


@dataclass(frozen=True)
class UnitOutcome:
    """What a worker reports for one unit."""

    unit: str
    rows: pl.DataFrame | None  # leaderboard rows (None when the unit failed)
    seconds: float  # wall time of the unit, model loading included when it paid for it
    worker: str  # host:pid that ran it
    loaded_model: bool = False  # True for the unit whose worker loaded the model
    load_seconds: float = 0.0
    error: UnitError | None = None
    restarted: bool = False  # Ray: it ran on a worker restarted after its process or node died

    @property
    def ok(self) -> bool:
        """Whether the unit finished."""
        return self.error is None


def data_source(data: Path | str | None, trust_local: bool = False) -> DataSource:
    """The `DataSource` of a sweep's `data` and `trust_local` (no download bars)."""
    return as_source(data, progress=False, trust_local=trust_local)


def worker_name() -> str:
    """host:pid of this process."""
    return f"{socket.gethostname()}:{os.getpid()}"
