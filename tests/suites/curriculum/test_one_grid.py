"""Inoculation, PVI and cross-distribution as one probe grid equal the per-call loops."""

from __future__ import annotations

import polars as pl
import pytest
import torch

from probes.metric_table import metric_names
from suites.curriculum import (
    CurriculumConfig,
    NLIFeatures,
    cross_distribution,
    inoculation,
    pvi_scores,
)
from suites.curriculum.probe_outputs import subset_metrics
from suites.curriculum.pvi import HARD, SIMPLE
from suites.curriculum.sampling import base_codes
from suites.suite import with_probe
from suites.tasks import Task
from tests.suites.curriculum.loop_reference import cross_loop, inoculation_loop, pvi_loop
from tests.suites.curriculum.toy import toy_task

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def toy() -> tuple[Task, NLIFeatures]:
    """Three labels with unequal counts (so N per label caps a label), two sites."""
    return toy_task(n_sites=2)


CONFIG = with_probe(
    CurriculumConfig(sizes=(5, 20, 50), pvi_folds=3), seeds=(0, 2), epochs=3, lr=1e-2
)


def test_inoculation_grid_equals_one_call_per_subsample(toy) -> None:
    task, feats = toy
    table = inoculation(task, feats, CONFIG, progress=False)
    loop = inoculation_loop(task, feats, CONFIG, ("pair", "hypothesis"))
    keys = ["input", "n_per_label", "seed", "site", "split", "metric"]
    joined = table.join(loop, on=keys, suffix="_loop")
    # the head's metrics on every split, the rank metrics on the test split
    per_probe = 3 * len(metric_names("item_sums", "classification")) + len(metric_names("ranks"))
    assert joined.height == table.height == loop.height == 2 * 3 * 2 * 2 * per_probe
    assert (joined["best_epoch"] == joined["best_epoch_loop"]).all()
    assert (joined["n_train"] == joined["n_train_loop"]).all()
    assert (joined["value"] - joined["value_loop"]).abs().max() < 1e-9
    assert table.schema["n_per_label"] == loop.schema["n_per_label"]
    base = base_codes(task, CONFIG.dev_fraction, CONFIG.split_seed)
    per_label = torch.bincount(task.targets[base == 0], minlength=3)
    assert int(per_label.min()) < 50  # the largest N takes all of the smallest label
    assert dict(table.select("n_per_label", "n_train").unique().iter_rows()) == {
        n: int(per_label.clamp(max=n).sum()) for n in CONFIG.sizes
    }


def test_pvi_grid_equals_one_call_per_fold(toy) -> None:
    task, feats = toy
    table = pvi_scores(task, feats, CONFIG, progress=False)
    loop = pvi_loop(task, feats, CONFIG)
    ours = torch.tensor(table.sort("site", "row")["pvi"].to_list(), dtype=torch.float64)
    ours = ours.view(2, -1)
    rows = torch.tensor(table.filter(site=0).sort("row")["row"].to_list())
    torch.testing.assert_close(ours, loop[:, rows], atol=1e-6, rtol=1e-6)


def test_cross_distribution_grid_equals_one_call_per_half(toy) -> None:
    task, feats = toy
    pvi = pvi_scores(task, feats, CONFIG, progress=False)
    table = cross_distribution(task, feats, pvi, CONFIG, progress=False)
    marks = dict(pvi.select("row", "difficulty").unique("row").iter_rows())
    halves = {
        h: torch.tensor([marks.get(i) == h for i in range(len(task))]) for h in (SIMPLE, HARD)
    }
    probs = cross_loop(task, feats, halves, CONFIG)
    test = task.splits == 2
    for train_half, p in probs.items():
        for test_half, half in halves.items():
            scores = subset_metrics(p, task.targets[test], half[test])
            for metric, values in scores.items():
                ours = table.filter(
                    pl.col("train_half") == train_half,
                    pl.col("test_half") == test_half,
                    pl.col("metric") == metric,
                ).sort("seed", "site")
                assert ours["value"].to_list() == pytest.approx(values.tolist(), abs=1e-9)
