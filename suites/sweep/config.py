"""What a sweep config file holds, as frozen dataclasses (parsed by `suites.sweep.parse`).

Every `[[suites]]` entry becomes its suite's own config (`EdgeConfig`, `HolmesConfig`,
`CurriculumConfig`, `CCConfig`, whose defaults cite the papers), with the sweep's `[probe]`
settings and the entry's `probe` applied on its `grid` and `train` and `[limits]` as its limits,
so one file can sweep suites with different protocols.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXECUTORS = ("local", "ray")
DTYPES = ("auto", "float32", "float16", "bfloat16")
INITS = ("pretrained", "random")


@dataclass(frozen=True)
class ModelSpec:
    """One model of a sweep, loaded once by whichever worker runs its units."""

    label: str  # leaderboard name: the config's name (or `label`), "@random" for random init
    name: str  # what `internals.load_subject` gets: alias, hub id, folder or glove:<path>
    init: str = "pretrained"
    dtype: str = "auto"  # auto = load_subject's default (the checkpoint's own dtype)
    seed: int = 0  # weights of a random-init model
    backend: str = "auto"

    def identity(self) -> dict[str, Any]:
        """What decides the model's activations (part of every unit's identity)."""
        return {
            "name": self.name,
            "init": self.init,
            "dtype": self.dtype,
            "seed": self.seed,
            "backend": self.backend,
        }


@dataclass(frozen=True)
class Resources:
    """What each unit gets: CPU threads (both executors) and, under Ray, GPUs and workers."""

    cpus: int = 1  # torch threads per unit (local and Ray alike) = Ray `num_cpus` per worker
    gpus: float | None = None  # Ray `num_gpus` per worker; None = 1 when the cluster has GPUs
    address: str | None = None  # Ray cluster address; None = start (or reuse) a local Ray
    workers_per_model: int = 1  # Ray workers sharing one model's units (each loads it once)
    max_workers: int | None = None  # live Ray workers at once; None = what the cluster holds


@dataclass(frozen=True)
class SuiteEntry:
    """A `[[suites]]` table: a suite of the registry and its config (groups = units per model)."""

    suite: str
    config: Any  # the suite's frozen Config (`suites.registry.SUITES[suite].config_type`)


@dataclass(frozen=True)
class SweepConfig:
    """A whole sweep: models x suite groups, probe settings, limits, executor, output folder."""

    out: Path
    models: tuple[ModelSpec, ...]
    suites: tuple[SuiteEntry, ...]
    store: Path | None = None  # activation store; None = OUT/store
    executor: str = "local"
    data: Path | str | None = None  # "full" (None), "samples" or a data folder (suites.datasets)
    trust_local: bool = False  # use data-folder files that differ from the registry as they are
    device: str | None = None  # None = the model's default device
    log_to: str | None = None  # an experiment tracker (`suites.trackers.TRACKERS`) or None
    retries: int = 2  # Ray: restarts of a worker whose process or node died (then it fails)
    resources: Resources = field(default_factory=Resources)
    source: Path | None = None  # the config file

    @property
    def store_path(self) -> Path:
        """Where features are cached."""
        return self.store if self.store is not None else self.out / "store"
