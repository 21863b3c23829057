"""`CurriculumConfig`: the probe-based analyses' settings (inoculation, hypothesis-only, PVI,
cross-distribution), with the paper's values where it gives them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from probes import ProbeGrid, TrainConfig
from suites.curriculum.features import PAIR, PARTS


@dataclass(frozen=True)
class CurriculumConfig:
    """How probes stand in for the paper's fine-tuned NLI model in every probe analysis.

    Probes read frozen pair features (`combine` parts, default `[p ; h]`); each training set
    gets a stratified `dev_fraction` carved out for the best-epoch choice (the data has no dev
    split). PVI is out-of-fold on train (`pvi_folds` cross-fitting) and held-out on val; its
    probes keep the epoch with the lowest dev loss, since PVI reads their log-probabilities.
    """

    sizes: tuple[int, ...] = (10, 50, 100, 500, 1000)  # paper §4.1: 10 to 1000 examples per label
    seeds: tuple[int, ...] = (0, 1, 2)  # paper §4.1 runs "several turns"; three is our choice
    combine: tuple[str, ...] = PAIR  # the issue: premise and hypothesis pooled, concatenated
    kind: Literal["linear", "mlp"] = "linear"
    dev_fraction: float = (
        0.1  # our choice: dev carved from train (the paper's code evaluates on dev)
    )
    split_seed: int = 0
    epochs: int = 20  # Holmes (Waldis et al. 2024) App. A.2 probe training (TrainConfig default)
    batch_size: int = 8  # paper App. D: batch size 8 (also lets 10-per-label sets take steps)
    lr: float = 5e-4  # Holmes App. A.2 probe learning rate (the paper's 1e-5 is for fine-tuning)
    pvi_folds: int = 5  # our choice: 5-fold cross-fitting gives every train item an unseen PVI
    pvi_site: int = -1  # the site whose PVI cuts simple/hard halves (default: the last)
    halves: Literal["global", "per_label"] = "global"  # paper §3.5: halves by PVI alone

    def __post_init__(self) -> None:
        object.__setattr__(self, "sizes", tuple(int(s) for s in self.sizes))
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
        object.__setattr__(self, "combine", tuple(self.combine))
        problems = {
            "sizes": not self.sizes or min(self.sizes) < 1,
            "seeds": not self.seeds or len(set(self.seeds)) != len(self.seeds),
            "combine": not self.combine or any(c not in PARTS for c in self.combine),
            "dev_fraction": not 0 < self.dev_fraction < 1,
            "pvi_folds": self.pvi_folds < 2,
            "halves": self.halves not in ("global", "per_label"),
        }
        for name, bad in problems.items():
            if bad:
                raise ValueError(
                    f"CurriculumConfig.{name}={getattr(self, name)!r} is invalid: sizes >= 1,"
                    f" distinct seeds, combine parts from {list(PARTS)}, dev_fraction in (0, 1),"
                    " pvi_folds >= 2, halves 'global' or 'per_label'"
                )

    def train_config(self, *, select_by: str | None = None) -> TrainConfig:
        """The probes' trainer settings (`select_by="loss"` for PVI probes)."""
        return TrainConfig(
            epochs=self.epochs, batch_size=self.batch_size, lr=self.lr, select_by=select_by
        )

    def grid(self, seeds: tuple[int, ...] | None = None) -> ProbeGrid:
        """Task probes (no control task) at every site for `seeds` (default: all seeds)."""
        return ProbeGrid(seeds=seeds or self.seeds, task=True, control=False, kind=self.kind)
