"""NLI pair features that stay on disk: a store's `[premise ; hypothesis]` `FeatureSet`.

With a store and a memory budget (`CurriculumConfig.train.memory`, `--memory`), the pooled
premise and hypothesis vectors are extracted lazily into the store (one shard held at a time)
and never held whole. The probe inputs are feature sets too: the default pair input `[p ; h]`
is the store's own shards; another `combine` (`|p-h|`, `p*h`, ...) and the hypothesis-only input
are derived feature sets streamed chunk by chunk beside them (`suites.probing.
derived_feature_set`, reused while they verify), from the same float32 values with the same
operations as `NLIFeatures`, so they hold the numbers the in-memory inputs hold. The probes read
them by groups of sites within the budget (`probes.fit_probes` on a `FeatureSet`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TypeAlias

import polars as pl
from torch import Tensor

from internals import FeatureSet, Site, Subject
from internals import sites as site_rules
from suites.curriculum.features import (
    PAIR,
    NLIFeatures,
    hypothesis_half,
    pair_parts,
    site_table,
)
from suites.errors import TaskError
from suites.probing import derived_feature_set, reduction_name, task_feature_set
from suites.tasks import Task


@dataclass(frozen=True)
class NLIFeatureSet:
    """Pooled `[premise ; hypothesis]` vectors of a task's items at some sites, on disk.

    `pairs`: the `[item, site, 2 * dim]` feature set; `store`: the folder its derived inputs are
    written in (`store/derived/`); `memory`: bytes of float32 features a derived input is written
    from at once (None: `suites.probing.FEATURE_CHUNK` items at a time).
    """

    pairs: FeatureSet
    sites: tuple[Site, ...]
    store: Path
    memory: int | None = None

    def __post_init__(self) -> None:
        _, n_sites, width = self.pairs.shape
        if n_sites != len(self.sites):
            raise TaskError(
                f"the feature set has {n_sites} sites but {len(self.sites)} sites are named"
            )
        if width % 2:
            raise TaskError(
                f"pair features have odd width {width}; expected [premise ; hypothesis]"
            )

    def __len__(self) -> int:
        return len(self.pairs)

    def pair(self, combine: Sequence[str] = PAIR) -> FeatureSet:
        """The parts in `combine` concatenated (default `[p ; h]`: the pairs themselves)."""
        if tuple(combine) == PAIR:
            return self.pairs
        return self._derived(partial(pair_parts, combine=tuple(combine)))

    def hypothesis_only(self) -> FeatureSet:
        """The hypothesis-only input."""
        return self._derived(hypothesis_half)

    def site_table(self) -> pl.DataFrame:
        """site (index), site_name and layer of each site, to label probe tables."""
        return site_table(self.sites)

    def _derived(self, transform: Callable[[Tensor], Tensor]) -> FeatureSet:
        name = reduction_name(transform)
        return derived_feature_set(self.pairs, self.store, name, transform, memory=self.memory)


PairFeatures: TypeAlias = NLIFeatures | NLIFeatureSet  # what every probe analysis reads


def nli_feature_set(
    subject: Subject,
    task: Task,
    sites: Sequence[Site] | None = None,
    *,
    store: str | Path,
    memory: int | None = None,
    pool: str = "mean",
    progress: bool = True,
) -> NLIFeatureSet:
    """`nli_features` on disk: every item of `task` extracted lazily into `store` (all layers by
    default); its derived inputs are written from at most `memory` bytes at once."""
    chosen = tuple(sites) if sites is not None else tuple(site_rules.every_layer(subject))
    pairs = task_feature_set(subject, task, chosen, store=store, pool=pool, progress=progress)
    return NLIFeatureSet(pairs, chosen, Path(store), memory)
