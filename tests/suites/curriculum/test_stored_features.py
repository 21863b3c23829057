"""The probe analyses on pair features kept in a store, under a memory budget, equal the analyses
of the same features held in memory; no read holds every site of every item."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import torch
from polars.testing import assert_frame_equal

from internals import FeatureSet
from probes import ProbeGrid, TrainConfig, fit_probes
from suites.curriculum import (
    CurriculumConfig,
    NLIFeatures,
    NLIFeatureSet,
    cross_distribution,
    inoculation,
    pvi_scores,
    run_curriculum,
)
from suites.curriculum.probe_outputs import held_out_probabilities, probe_probabilities
from suites.errors import TaskError
from suites.suite import with_probe
from tests.suites.curriculum.toy import toy_task

EVERY_PART = ("premise", "hypothesis", "abs_diff", "product")
CONFIG = with_probe(
    CurriculumConfig(sizes=(5, 20), pvi_folds=3, combine=EVERY_PART, n_resamples=200),
    seeds=(0, 2),
    epochs=3,
    lr=1e-2,
)
# 170 items x 4 sites; the pair input is 24 floats wide (16,320 bytes a site), the hypothesis 6:
# the pair input (every part) trains in 4 groups of one site, the hypothesis (16,320 bytes) whole
BUDGET = 17_000

pytestmark = pytest.mark.usefixtures("one_thread")


class Reads:
    """Records the (items, sites) of every `FeatureSet.read` and the feature sets' shapes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[tuple[int, int, tuple[int, int, int]]] = []
        read = FeatureSet.read

        def spy(fs: FeatureSet, *args: Any, **kwargs: Any) -> Any:
            out = read(fs, *args, **kwargs)
            self.seen.append((out.shape[0], out.shape[1], fs.shape))
            return out

        monkeypatch.setattr(FeatureSet, "read", spy)


def analyses(task: Any, feats: NLIFeatures | NLIFeatureSet, config: CurriculumConfig) -> list:
    pvi = pvi_scores(task, feats, config, progress=False)
    return [
        inoculation(task, feats, config, progress=False),
        pvi,
        cross_distribution(task, feats, pvi, config, progress=False),
    ]


def test_analyses_from_a_store_equal_the_analyses_in_memory(tmp_path, monkeypatch):
    task, in_memory = toy_task(n_sites=4)
    memory = BUDGET
    pairs = torch.cat([in_memory.premise, in_memory.hypothesis], dim=-1)
    written = FeatureSet.write(tmp_path / "pairs", [pairs[:100], pairs[100:]], ["a", "b", "c", "d"])
    stored = NLIFeatureSet(written, in_memory.sites, tmp_path, memory)
    expected = analyses(task, in_memory, CONFIG)
    reads = Reads(monkeypatch)
    budgeted = replace(CONFIG, train=replace(CONFIG.train, memory=memory))
    got = analyses(task, stored, budgeted)
    for ours, theirs in zip(got, expected, strict=True):
        # labels, epochs and halves exact; numbers within the float32 tolerances of the trainer
        # tests (a grid of fewer sites may sum an intercept's gradient in another order)
        assert_frame_equal(ours, theirs)
    # the derived inputs were written beside the pairs, and every read kept within the budget
    assert len(list((tmp_path / "derived").iterdir())) == 2  # every part, the hypothesis alone
    assert reads.seen
    for items, sites, (_, _, width) in reads.seen:
        assert items * sites * width * 4 <= memory
    # the pair input's sites one by one, the hypothesis's together, each read whole
    whole = {(sites, shape[2]) for items, sites, shape in reads.seen if items == shape[0]}
    assert whole == {(1, 24), (4, 6)}


@pytest.mark.parametrize("memory", [None, 4_000, 500])  # one group; groups of 2; blocks of rows
def test_held_out_rows_scored_by_site_groups_equal_the_scores_in_memory(tmp_path, memory):
    task, in_memory = toy_task(n_sites=4)
    x = in_memory.pair()  # 12 floats a site: 40 rows are 1,920 bytes a site
    splits = task.splits.clone()
    splits[::7] = 1  # dev items for the best epoch
    config = TrainConfig(epochs=2, batch_size=8)
    results = fit_probes(x, task.targets, splits, ProbeGrid(seeds=(0, 1)), config, progress=False)
    rows = torch.arange(3, 123, 3)
    written = FeatureSet.write(tmp_path / "x", [x], ["a", "b", "c", "d"])
    expected = probe_probabilities(results, x[rows])
    assert torch.equal(held_out_probabilities(results, written, rows, memory), expected)
    assert torch.equal(held_out_probabilities(results, x, rows, memory), expected)


def test_the_default_pair_input_is_the_stored_pairs(tmp_path):
    task, in_memory = toy_task(n_sites=2)
    pairs = torch.cat([in_memory.premise, in_memory.hypothesis], dim=-1)
    written = FeatureSet.write(tmp_path / "pairs", [pairs], ["a", "b"])
    stored = NLIFeatureSet(written, in_memory.sites, tmp_path, 5_000)
    assert stored.pair() is written  # no copy of [p ; h]
    assert torch.equal(stored.hypothesis_only().to_tensor(), in_memory.hypothesis_only())
    every = stored.pair(EVERY_PART)
    assert torch.equal(every.to_tensor(), in_memory.pair(EVERY_PART))
    assert stored.pair(EVERY_PART).key == every.key  # reused from the store, not written again
    assert len(stored) == len(task) and stored.site_table().equals(in_memory.site_table())


def test_a_budget_without_a_store_is_refused(tmp_path):
    config = replace(CONFIG, train=replace(CONFIG.train, memory="4MiB"))
    with pytest.raises(TaskError, match=r"CurriculumConfig\.train\.memory='4MiB' bounds .* store"):
        run_curriculum({}, tmp_path / "out", config=config)
    assert not (tmp_path / "out").exists()
