"""`CCConfig`: the comparative-correlative syntax probe as a suite (`lingprobe run cc`, sweeps)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from suites.cc.grammar import FEATURES
from suites.cc.syntax_probe import SyntaxProbeConfig
from suites.errors import TaskError


@dataclass(frozen=True)
class CCConfig:
    """The CC syntax probe: a logistic-regression config (`logistic`) instead of a probe grid.

    `features`: the controlled features, one unit each (D_f); `n_per_class`: sentences per class
    at each feature value (paper §3.1.1: 1000); `seeds`: data seeds (each draws fresh subsets);
    `layers`: the sites probed. `corpus`: a file of labelled sentences (sentence,label[,pos
    pattern]) probed too, `corpus_test_fraction` of it held out. A sweep's `[probe]` (and the
    probe flags of `lingprobe run cc`) take `seeds` and the logistic regression's fields (`C`,
    `max_iter`, ..., and `memory`, which with a store bounds the features held).
    """

    probe_fields: ClassVar[tuple[str, ...]] = ("logistic",)

    logistic: SyntaxProbeConfig = field(default_factory=SyntaxProbeConfig)
    features: tuple[str, ...] = FEATURES
    n_per_class: int = 1000  # paper §3.1.1: 1000 sentences per class
    seeds: tuple[int, ...] = (0,)
    layers: str = "all"  # paper §3.1.3: every layer
    corpus: str | None = None
    corpus_test_fraction: float = 0.3

    def __post_init__(self) -> None:
        object.__setattr__(self, "features", tuple(self.features))
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown or not self.features:
            raise TaskError(f"CCConfig.features {unknown or '[]'}: choose among {list(FEATURES)}")
        if self.n_per_class < 1 or not self.seeds:
            raise TaskError("CCConfig: n_per_class >= 1 and at least one seed")
        if not 0 < self.corpus_test_fraction < 1:
            raise TaskError(
                f"CCConfig.corpus_test_fraction={self.corpus_test_fraction}: give a fraction"
                " in (0, 1)"
            )
