"""`StructuralSuiteConfig`: what the structural suite reads and trains (CLI `run structural`,
sweeps). The probes' regimen is `structural` (john-hewitt/structural-probes' defaults)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from internals import PoolHow
from probes.structural import StructuralConfig, StructuralKind
from suites.errors import TaskError
from suites.suite import Limits

KINDS: tuple[StructuralKind, ...] = ("distance", "depth")


@dataclass(frozen=True)
class StructuralSuiteConfig:
    """Distance and depth probes at `layers` of a UD treebank.

    Train is the first `train_sentences` of `train_file`, dev (the regimen's learning-rate decay
    and early stopping) the next `dev_sentences`, test the first `test_sentences` of `test_file`
    (None: all). Files are paths or registry references; EWT's dev file is our test set because
    the development mirror and the shipped sample hold no EWT test file. `limits.sentences` caps
    train and test further (smoke runs). A sweep's entry table `probe = {epochs = 10}` sets the
    regimen; seeds and ranks are the suite's own keys.
    """

    probe_fields: ClassVar[tuple[str, ...]] = ("structural",)

    structural: StructuralConfig = field(default_factory=StructuralConfig)
    kinds: tuple[StructuralKind, ...] = KINDS
    seeds: tuple[int, ...] = (0,)  # the paper reports one probe per layer
    ranks: tuple[int | None, ...] = (None,)  # naacl19 BERT configs: maximum_rank = hidden size
    pool: PoolHow = "mean"  # reference data.py BERTDataset: a word is the mean of its subwords
    train_file: str = "ud-english-ewt:train"
    test_file: str = "ud-english-ewt:dev"
    train_sentences: int | None = 4000  # our choice: a third of EWT train keeps a CPU run short
    dev_sentences: int = 500
    test_sentences: int | None = None
    layers: str = "all"
    limits: Limits = field(default_factory=Limits)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kinds", tuple(self.kinds))
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
        object.__setattr__(self, "ranks", tuple(None if r is None else int(r) for r in self.ranks))
        unknown = [k for k in self.kinds if k not in KINDS]
        if unknown or not self.kinds:
            raise TaskError(f"StructuralSuiteConfig.kinds={list(self.kinds)}: choose among {KINDS}")
        for name in ("train_sentences", "dev_sentences", "test_sentences"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise TaskError(f"StructuralSuiteConfig.{name}={value}: give a positive integer")

    def caps(self) -> tuple[int | None, int | None]:
        """(train, test) sentence caps after `limits.sentences`."""
        cap = self.limits.sentences
        return _least(self.train_sentences, cap), _least(self.test_sentences, cap)


def _least(a: int | None, b: int | None) -> int | None:
    values = [v for v in (a, b) if v is not None]
    return min(values) if values else None
