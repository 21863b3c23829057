"""Frozen pair features of NLI items: premise and hypothesis pooled, and their combinations.

One `task_features` call on `SpanItem(premise, text_pair=hypothesis)` gives
`[premise_pooled ; hypothesis_pooled]` per site (each text encoded on its own, one forward per
distinct text). The pair input of a probe concatenates the parts named in `combine`:
`premise`, `hypothesis`, `|p-h|` (`abs_diff`) and `p*h` (`product`), the classic sentence-pair
features (Conneau et al. 2017, InferSent); the hypothesis-only input (Poliak et al. 2018) is
the hypothesis half alone, equal to encoding `SpanItem(hypothesis)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import polars as pl
import torch
from jaxtyping import Float
from torch import Tensor

from internals import Site, Subject
from internals import sites as site_rules
from suites.errors import TaskError
from suites.probing import task_features
from suites.schema import site_columns
from suites.tasks import Task

Part = Literal["premise", "hypothesis", "abs_diff", "product"]
PARTS: tuple[str, ...] = ("premise", "hypothesis", "abs_diff", "product")
PAIR = ("premise", "hypothesis")  # the default pair input: [p ; h]


@dataclass(frozen=True)
class NLIFeatures:
    """Pooled premise and hypothesis vectors of a task's items at some sites."""

    premise: Float[Tensor, "item site dim"]
    hypothesis: Float[Tensor, "item site dim"]
    sites: tuple[Site, ...]

    def __post_init__(self) -> None:
        if self.premise.shape != self.hypothesis.shape:
            raise TaskError(
                f"premise features {tuple(self.premise.shape)} and hypothesis features"
                f" {tuple(self.hypothesis.shape)} differ; build both from the same items"
            )
        if self.premise.shape[1] != len(self.sites):
            raise TaskError(
                f"features have {self.premise.shape[1]} sites but {len(self.sites)} sites are named"
            )

    @classmethod
    def from_pairs(
        cls, pairs: Float[Tensor, "item site dim2"], sites: Sequence[Site]
    ) -> NLIFeatures:
        """Split `[premise ; hypothesis]` features in their two halves."""
        if pairs.shape[-1] % 2:
            raise TaskError(
                f"pair features have odd width {pairs.shape[-1]}; expected [premise ; hypothesis]"
            )
        half = pairs.shape[-1] // 2
        return cls(pairs[..., :half], pairs[..., half:], tuple(sites))

    def __len__(self) -> int:
        return self.premise.shape[0]

    def pair(self, combine: Sequence[str] = PAIR) -> Float[Tensor, "item site width"]:
        """The parts in `combine` concatenated (default `[p ; h]`)."""
        return combine_parts(self.premise, self.hypothesis, combine)

    def hypothesis_only(self) -> Float[Tensor, "item site dim"]:
        """The hypothesis-only input."""
        return self.hypothesis

    def site_table(self) -> pl.DataFrame:
        """site (index), site_name and layer of each site, to label probe tables."""
        return site_table(self.sites)

    def rows(self, index: Tensor) -> NLIFeatures:
        """The features of some items."""
        return NLIFeatures(self.premise[index], self.hypothesis[index], self.sites)


def combine_parts(
    premise: Float[Tensor, "item site dim"],
    hypothesis: Float[Tensor, "item site dim"],
    combine: Sequence[str] = PAIR,
) -> Float[Tensor, "item site width"]:
    """The parts in `combine` of premise and hypothesis vectors, concatenated."""
    bad = [c for c in combine if c not in PARTS]
    if bad or not combine:
        raise TaskError(f"combine={list(combine)}: choose one or more of {list(PARTS)}")
    p, h = premise, hypothesis
    made = {
        "premise": lambda: p,
        "hypothesis": lambda: h,
        "abs_diff": lambda: (p - h).abs(),
        "product": lambda: p * h,
    }
    return torch.cat([made[c]() for c in combine], dim=-1)


def pair_parts(
    pairs: Float[Tensor, "item site dim2"], combine: Sequence[str] = PAIR
) -> Float[Tensor, "item site width"]:
    """The parts in `combine` of `[premise ; hypothesis]` features (a chunk of a feature set)."""
    half = pairs.shape[-1] // 2
    return combine_parts(pairs[..., :half], pairs[..., half:], combine)


def hypothesis_half(pairs: Float[Tensor, "item site dim2"]) -> Float[Tensor, "item site dim"]:
    """The hypothesis half of `[premise ; hypothesis]` features: the hypothesis-only input."""
    return pairs[..., pairs.shape[-1] // 2 :]


def site_table(sites: Sequence[Site]) -> pl.DataFrame:
    """site (index), site_name and layer of each site, to label probe tables."""
    return site_columns(sites).rename({"site_index": "site", "site": "site_name"})


def nli_features(
    subject: Subject,
    task: Task,
    sites: Sequence[Site] | None = None,
    *,
    pool: str = "mean",
    store: str | Path | None = None,
    progress: bool = True,
) -> NLIFeatures:
    """Pooled premise and hypothesis features of every item of `task` (all layers by default)."""
    chosen = tuple(sites) if sites is not None else tuple(site_rules.every_layer(subject))
    pairs = task_features(subject, task, chosen, pool=pool, store=store, progress=progress)
    return NLIFeatures.from_pairs(pairs, chosen)
