"""`CCConfig`: the comparative-correlative syntax probe as a suite (CLI `run cc-syntax`, sweeps)."""

from __future__ import annotations

from dataclasses import dataclass, field

from suites.cc.grammar import FEATURES
from suites.cc.syntax_probe import SyntaxProbeConfig
from suites.errors import TaskError


@dataclass(frozen=True)
class CCConfig:
    """The CC syntax probe: a logistic-regression config (`logistic`) instead of a probe grid.

    `features`: the controlled features, one unit each (D_f); `n_per_class`: sentences per class
    at each feature value (paper §3.1.1: 1000); `seeds`: data seeds (each draws fresh subsets).
    A sweep's `[probe]` settings (seeds, epochs, ...) concern minibatch probes and do not apply
    here; an entry's own `probe = {C = 0.5}` sets the logistic regression.
    """

    logistic: SyntaxProbeConfig = field(default_factory=SyntaxProbeConfig)
    features: tuple[str, ...] = FEATURES
    n_per_class: int = 1000  # paper §3.1.1: 1000 sentences per class
    seeds: tuple[int, ...] = (0,)

    def __post_init__(self) -> None:
        object.__setattr__(self, "features", tuple(self.features))
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown or not self.features:
            raise TaskError(f"CCConfig.features {unknown or '[]'}: choose among {list(FEATURES)}")
        if self.n_per_class < 1 or not self.seeds:
            raise TaskError("CCConfig: n_per_class >= 1 and at least one seed")
