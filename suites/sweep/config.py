"""What a sweep config file holds, as frozen dataclasses (parsed by `suites.sweep.parse`).

A `None` probe or limit setting leaves the suite's own default in place (`HolmesConfig`,
`EdgeConfig`, whose comments cite the papers), so one file can sweep suites with different
protocols.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

EXECUTORS = ("local", "ray")
DTYPES = ("auto", "float32", "float16", "bfloat16")
INITS = ("pretrained", "random")
RANDOM_SUFFIX = "@random"  # the Holmes label of a random-init twin (suites.holmes.models)


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
class ProbeSettings:
    """Probe settings shared by every suite of a sweep (None = the suite's default)."""

    seeds: tuple[int, ...] | None = None
    epochs: int | None = None
    lr: float | None = None
    batch_size: int | None = None
    dropout: float | None = None
    control: bool | None = None
    mdl: bool | None = None  # Holmes only: compression by online codelength
    fractions: tuple[float, ...] | None = None  # Holmes only: extra train fractions
    kind: str | None = None  # edge only: "linear" or "mlp"

    def over(self, base: ProbeSettings) -> ProbeSettings:
        """These settings where given, `base`'s elsewhere."""
        return replace(base, **self.given())

    def given(self) -> dict[str, Any]:
        """The settings that are not None."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }


@dataclass(frozen=True)
class Limits:
    """Caps that keep a sweep small (tests, smoke runs); None = everything."""

    train: int | None = None  # Holmes: train items (whole sentences)
    dev: int | None = None  # Holmes: dev items
    test: int | None = None  # Holmes: test items
    blimp_pairs: int | None = None  # Holmes: minimal pairs per BLiMP paradigm
    sentences: int | None = None  # edge: sentences read from each of train and test


@dataclass(frozen=True)
class Resources:
    """What each unit gets: CPU threads (both executors) and, under Ray, GPUs and workers."""

    cpus: int = 1  # torch threads per unit (local and Ray alike) = Ray `num_cpus` per worker
    gpus: float | None = None  # Ray `num_gpus` per worker; None = 1 when the cluster has GPUs
    address: str | None = None  # Ray cluster address; None = start (or reuse) a local Ray
    workers_per_model: int = 1  # Ray workers sharing one model's units (each loads it once)
    max_workers: int | None = None  # live Ray workers at once; None = what the cluster holds


@dataclass(frozen=True)
class TaskGroup:
    """A dataset group: the tasks one unit runs for one model (features once per task)."""

    name: str
    tasks: tuple[str, ...]


@dataclass(frozen=True)
class HolmesEntry:
    """A `[[suites]]` entry with `suite = "holmes"`: every group is a unit per model."""

    groups: tuple[TaskGroup, ...]
    layers: str = "last"  # Holmes §4.3: the last layer
    probe: ProbeSettings = field(default_factory=ProbeSettings)
    suite: str = "holmes"


@dataclass(frozen=True)
class EdgeEntry:
    """A `[[suites]]` entry with `suite = "edge"`: one task (train and test file) per unit."""

    name: str  # dataset name in the leaderboard (default: the task spec)
    task: str  # conllu:upos | conllu:xpos | conllu:deprel | conllu:arc | jiant | semeval
    train: str
    test: str
    layers: str = "all"  # edge probing reads every layer (Sahu et al.)
    probe: ProbeSettings = field(default_factory=ProbeSettings)
    legacy_keys: bool = False
    pair_pooling: str = "mean"  # Sahu et al. §2.1: span pairs averaged
    balance_binary: bool = False
    suite: str = "edge"

    @property
    def groups(self) -> tuple[TaskGroup, ...]:
        """The single group of this entry."""
        return (TaskGroup(self.name, (self.task,)),)


SuiteEntry = HolmesEntry | EdgeEntry


@dataclass(frozen=True)
class SweepConfig:
    """A whole sweep: models x suite groups, probe settings, limits, executor, output folder."""

    out: Path
    models: tuple[ModelSpec, ...]
    suites: tuple[SuiteEntry, ...]
    store: Path | None = None  # activation store; None = OUT/store
    executor: str = "local"
    data: Path | str | None = None  # "full" (None), "samples" or a data folder (suites.datasets)
    device: str | None = None  # None = the model's default device
    seed: int = 0  # global RNG seed set at the start of every unit (order-independent runs)
    probe: ProbeSettings = field(default_factory=ProbeSettings)
    limits: Limits = field(default_factory=Limits)
    resources: Resources = field(default_factory=Resources)
    source: Path | None = None  # the config file

    @property
    def store_path(self) -> Path:
        """Where features are cached."""
        return self.store if self.store is not None else self.out / "store"
