"""`CurriculumConfig`: the probe-based analyses' settings (inoculation, hypothesis-only, PVI,
cross-distribution), with the paper's values where it gives them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal

import torch
from torch import Tensor

from probes import DEV, TRAIN, ProbeGrid, TrainConfig
from suites.curriculum.features import PAIR, PARTS
from suites.errors import TaskError
from suites.suite import Limits

ANALYSES = ("zero-shot", "inoculation", "hypothesis-only", "pvi", "cross-distribution", "finetune")
PROBE_ANALYSES = ("inoculation", "hypothesis-only", "pvi", "cross-distribution")


def _paper_grid() -> ProbeGrid:
    # Paper §4.1 runs "several turns"; three seeds is our choice. Task probes only.
    return ProbeGrid(seeds=(0, 1, 2), task=True, control=False, kind="linear")


def _paper_train() -> TrainConfig:
    # Holmes (Waldis et al. 2024) App. A.2 epochs and learning rate (the paper's 1e-5 is for
    # fine-tuning); paper App. D: batch size 8 (also lets 10-per-label sets take steps).
    return TrainConfig(epochs=20, batch_size=8, lr=5e-4)


@dataclass(frozen=True)
class CurriculumConfig:
    """How probes stand in for the paper's fine-tuned NLI model in every probe analysis.

    Probes read frozen pair features (`combine` parts, default `[p ; h]`); each training set
    gets a stratified `dev_fraction` carved out for the best-epoch choice (the data has no dev
    split). PVI is out-of-fold on train (`pvi_folds` cross-fitting) and held-out on val; its
    probes keep the epoch with the lowest dev loss, since PVI reads their log-probabilities.
    `phenomena`, `analyses`, `layers` and `limits` say what the suite runs (CLI and sweeps).
    `train.memory` (a budget, `--memory`, a sweep's `[probe] memory`) keeps the features in the
    store (a sweep always has one; `run_curriculum` without `store` refuses a budget): every
    analysis reads them by groups of sites that fit it (`suites.curriculum.stored_features`),
    with the tables of the run in memory.
    """

    probe_fields: ClassVar[tuple[str, ...]] = ("grid", "train")

    grid: ProbeGrid = field(default_factory=_paper_grid)
    train: TrainConfig = field(default_factory=_paper_train)
    sizes: tuple[int, ...] = (10, 50, 100, 500, 1000)  # paper §4.1: 10 to 1000 examples per label
    combine: tuple[str, ...] = PAIR  # the issue: premise and hypothesis pooled, concatenated
    dev_fraction: float = (
        0.1  # our choice: dev carved from train (the paper's code evaluates on dev)
    )
    split_seed: int = 0
    pvi_folds: int = 5  # our choice: 5-fold cross-fitting gives every train item an unseen PVI
    pvi_site: int = -1  # the site whose PVI cuts simple/hard halves (default: the last)
    halves: Literal["global", "per_label"] = "global"  # paper §3.5: halves by PVI alone
    phenomena: tuple[str, ...] = ()  # () = the eight typed phenomena the data offers
    analyses: tuple[str, ...] = PROBE_ANALYSES
    layers: str = "all"
    limits: Limits = field(default_factory=Limits)  # train / test cap items per phenomenon
    ci: float | None = 0.95  # bootstrap interval of each inoculation point's seed mean (None: none)
    n_resamples: int = 1000  # bootstrap resamples of the test items

    def __post_init__(self) -> None:
        object.__setattr__(self, "sizes", tuple(int(s) for s in self.sizes))
        object.__setattr__(self, "combine", tuple(self.combine))
        object.__setattr__(self, "phenomena", tuple(self.phenomena))
        object.__setattr__(self, "analyses", tuple(self.analyses))
        problems = {
            "sizes": (not self.sizes or min(self.sizes) < 1, "give examples per label >= 1"),
            "combine": (
                not self.combine or any(c not in PARTS for c in self.combine),
                f"choose parts from {list(PARTS)}",
            ),
            "dev_fraction": (not 0 < self.dev_fraction < 1, "give a fraction in (0, 1)"),
            "pvi_folds": (self.pvi_folds < 2, "give at least 2 folds"),
            "halves": (self.halves not in ("global", "per_label"), "choose global or per_label"),
            "analyses": (
                not self.analyses or any(a not in ANALYSES for a in self.analyses),
                f"choose from {list(ANALYSES)}",
            ),
        }
        for name, (bad, fix) in problems.items():
            if bad:
                raise TaskError(f"CurriculumConfig.{name}={getattr(self, name)!r}: {fix}")

    @property
    def seeds(self) -> tuple[int, ...]:
        """The probe (and subsample) seeds: `grid.seeds`."""
        return tuple(self.grid.seeds)

    def train_config(self, *, select_by: str | None = None) -> TrainConfig:
        """The probes' trainer settings (`select_by="loss"` for PVI probes)."""
        return replace(self.train, select_by=select_by)

    def probe_grid(self, seeds: tuple[int, ...] | None = None) -> ProbeGrid:
        """The grid for `seeds` (default: all seeds)."""
        return replace(self.grid, seeds=seeds or self.grid.seeds)

    def masked_grid(self, codes: Sequence[Tensor]) -> ProbeGrid:
        """The grid with one explicit train/dev mask per split-code vector of `codes` (each
        mask's probes train on its TRAIN items and pick their epoch on its DEV items)."""
        return replace(
            self.grid,
            train_masks=torch.stack([c == TRAIN for c in codes]),
            dev_masks=torch.stack([c == DEV for c in codes]),
        )
