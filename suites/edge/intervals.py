"""Uncertainty of the edge tables: bootstrap intervals of every score and the paired test of
pretrained against random, on the original and each filtered test set.

One subject's probes are scored on the same test items for every test set, so each test set is
a subset of its test predictions (`TestPredictions.subset`). The interval of a site's score is
the paired bootstrap of the seed mean (`probes.intervals.seed_mean_intervals`, BCa); pretrained
against random is `probes.compare_probes` on the two subjects' probes (same items, the same
resamples, seeds paired), with a paired permutation test and Holm's correction over the sites
of a test set. The mark in the printed tables comes from that test (Holm-adjusted p < 0.05).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl
import torch

from internals import Site, Subject
from probes import ProbeResults, TestPredictions
from probes.stats import compare_probes, seed_mean_intervals
from suites.schema import site_columns

ORIGINAL = "original"
SIGNIFICANT = 0.05  # Holm-adjusted p below this gets the mark


@dataclass(frozen=True)
class ScoredSet:
    """A subject's probes on one test set: the probe table and their test predictions."""

    probes: pl.DataFrame
    test: TestPredictions


def test_sets(results: ProbeResults, keep: Mapping[str, torch.Tensor]) -> dict[str, ScoredSet]:
    """One `ScoredSet` per test set (`keep`: test-set name -> flag per test item)."""
    if results.test is None:
        return {}
    return {name: ScoredSet(results.probes, results.test.subset(k)) for name, k in keep.items()}


def split_name(test_set: str) -> str:
    """The results-schema split of a test set ("test", "test:mem_exact", ...)."""
    return "test" if test_set == ORIGINAL else f"test:{test_set}"


def subject_intervals(
    subject: Subject,
    task: str,
    sets: Mapping[str, ScoredSet],
    sites: Sequence[Site],
    metric: str,
    *,
    ci: float,
    n_resamples: int,
    seed: int,
) -> pl.DataFrame:
    """`model, init, task, site, layer, variant, split, metric, ci_low, ci_high` of every site's
    seed-mean score on every test set."""
    names = site_columns(sites)
    parts = []
    for test_set, scored in sets.items():
        if scored.test.n_items == 0:
            continue
        frame = seed_mean_intervals(
            scored.probes, scored.test, ci=ci, n_resamples=n_resamples, seed=seed, metrics=[metric]
        )
        parts.append(frame.with_columns(split=pl.lit(split_name(test_set))))
    if not parts:
        return pl.DataFrame()
    return (
        pl.concat(parts)
        .join(names, left_on="site", right_on="site_index")
        .select(
            model=pl.lit(subject.name),
            init=pl.lit(subject.init),
            task=pl.lit(task),
            site="site_right",
            layer="layer",
            variant="variant",
            split="split",
            metric="metric",
            ci_low="ci_low",
            ci_high="ci_high",
        )
    )


def compare_inits(
    model: str,
    task: str,
    left: Mapping[str, ScoredSet],
    right: Mapping[str, ScoredSet],
    names: pl.DataFrame,
    metric: str,
    *,
    ci: float,
    n_resamples: int,
    seed: int,
) -> pl.DataFrame:
    """Pretrained minus random task score per site and test set: `difference`, its interval,
    the paired permutation `p_value` and `p_holm` (Holm over the sites of a test set).
    `names`: the sites' `site_columns`."""
    parts = []
    for test_set in left.keys() & right.keys():
        if left[test_set].test.n_items == 0:
            continue
        frame = compare_probes(
            left[test_set],
            right[test_set],
            left_where={"variant": "task"},
            right_where={"variant": "task"},
            by=["site"],
            metrics=[metric],
            ci=ci,
            n_resamples=n_resamples,
            seed=seed,
        )
        parts.append(frame.with_columns(split=pl.lit(split_name(test_set))))
    if not parts:
        return pl.DataFrame()
    return (
        pl.concat(parts)
        .join(names, left_on="site", right_on="site_index")
        .select(
            task=pl.lit(task),
            model=pl.lit(model),
            site="site_right",
            layer="layer",
            split="split",
            metric="metric",
            pretrained="left",
            random="right",
            difference="difference",
            ci_low="ci_low",
            ci_high="ci_high",
            p_value="p_value",
            p_holm="p_holm",
        )
    )


def twins(subjects: Sequence[Subject]) -> list[tuple[int, int]]:
    """(pretrained, random) positions of subjects that are one model and its random twin."""
    pairs = []
    for r, rand in enumerate(subjects):
        if rand.init != "random":
            continue
        base = rand.name.split("@")[0]
        for p, pre in enumerate(subjects):
            if pre.init == "pretrained" and pre.name.split("@")[0] == base:
                pairs.append((p, r))
                break
    return pairs
