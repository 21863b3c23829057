"""Intervals and paired comparisons on fitted results: summary(ci), selectivity(ci),
compare_probes across layers, variants and models; the stored test predictions."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import torch

from probes import (
    ProbeConfigError,
    ProbeGrid,
    ProbeInputError,
    ProbeResults,
    TestPredictions,
    TrainConfig,
    fit_probes,
    random_splits,
)
from probes._grid.resampling import seed_counts
from probes.metric_table import metric_names
from probes.predictions import compact_ids
from probes.rank_metrics import RANK_METRICS
from probes.stats import (
    ItemResamples,
    SwapPatterns,
    bootstrap_probes,
    compare_probes,
    confidence_interval,
    permutation_test,
)
from tests.probes.conftest import Synthetic, make_synthetic

FAST = TrainConfig(epochs=4, batch_size=32, lr=0.02)  # tiny data: a large step
N = 400


@pytest.fixture(scope="module")
def data() -> Synthetic:
    return make_synthetic(n=N)


@pytest.fixture(scope="module")
def fitted(data: Synthetic) -> ProbeResults:
    grid = ProbeGrid(seeds=[0, 1], control=True)
    return fit_probes(
        data.feats, data.labels, random_splits(N), grid, FAST, keys=data.keys, progress=False
    )


def test_results_keep_compact_test_predictions(
    fitted: ProbeResults, data: Synthetic, tmp_path: Path
) -> None:
    test = fitted.test
    assert test is not None and test.pred.dtype == torch.int8 and test.targets.dtype == torch.int8
    test_items = (random_splits(N).codes() == 2).nonzero().flatten()
    assert torch.equal(test.items, test_items)
    pred = fitted.predict(data.feats[test_items])
    assert torch.equal(test.pred.long(), pred)
    # task rows are the labels; a control row is its seed's control labels
    task = fitted.probes.filter(variant="task")["probe"].to_list()
    assert bool((test.truth(torch.tensor(task)) == data.labels[test_items]).all())
    fitted.save(tmp_path / "run")
    back = ProbeResults.load(tmp_path / "run")
    assert back.test is not None and torch.equal(back.test.pred, test.pred)
    assert torch.equal(back.test.target_row, test.target_row) and back.test.head == test.head
    assert compact_ids(torch.tensor([299]), 300).dtype == torch.int16


def test_summary_intervals_are_the_seed_mean_bootstrap(fitted: ProbeResults) -> None:
    summary = fitted.summary(n_resamples=300, seed=3)
    test_rows = summary.filter(split="test")
    assert test_rows["ci_low"].null_count() == 0
    per_split = test_rows.filter(~pl.col("metric").is_in(RANK_METRICS)).height  # test only
    assert summary.filter(pl.col("split") != "test")["ci_low"].null_count() == 2 * per_split
    inside = test_rows.filter(
        (pl.col("ci_low") <= pl.col("mean") + 1e-12) & (pl.col("mean") <= pl.col("ci_high") + 1e-12)
    )
    assert inside.height == test_rows.height
    # one group by hand: site 2, task, both seeds, macro-F1
    test = fitted.test
    assert test is not None
    members = fitted.probes.filter(site=2, variant="task")["probe"].to_list()
    reps = bootstrap_probes(
        test.pred,
        test.truth(),
        ItemResamples(test.n_items, 300, 3),
        head="classification",
        outputs=4,
        metrics=["macro_f1"],
    )["macro_f1"]
    weights = torch.zeros(1, fitted.probes.height, dtype=torch.float64)
    weights[0, members] = 0.5
    low, high = confidence_interval(reps.combine(weights), 0.95, "bca")
    row = test_rows.filter(site_index=2, variant="task", metric="macro_f1").row(0, named=True)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((float(low[0]), float(high[0])))
    assert row["mean"] == pytest.approx(float(reps.combine(weights).point[0]))
    assert fitted.summary(ci=None).columns == [
        "site",
        "site_index",
        "variant",
        "mask",
        "split",
        "metric",
        "mean",
        "std",
        "n_seeds",
    ]


def test_summary_with_resampled_seeds(fitted: ProbeResults) -> None:
    fixed = fitted.summary(n_resamples=300, method="percentile").filter(split="test")
    both = fitted.summary(n_resamples=300, method="percentile", seeds="resample").filter(
        split="test"
    )
    width = (pl.col("ci_high") - pl.col("ci_low")).mean()
    assert both.select(width).item() >= fixed.select(width).item()  # seeds add variation
    with pytest.raises(ProbeConfigError, match="resample"):
        fitted.summary(seeds="resample")  # BCa is for one resampled factor
    # by hand: replicate b averages seed s's replicate b, drawn c[b, s] times
    test = fitted.test
    assert test is not None
    reps = bootstrap_probes(
        test.pred,
        test.truth(),
        ItemResamples(test.n_items, 300, 0),
        head="classification",
        outputs=4,
        metrics=["accuracy"],
        jackknife=False,
    )["accuracy"]
    members = fitted.probes.filter(site=1, variant="control").sort("seed")["probe"].to_list()
    counts = seed_counts(2, 300, 0).double()
    boot = (counts.T * reps.boot[members]).sum(0) / 2
    low, high = torch.quantile(boot, torch.tensor([0.025, 0.975], dtype=torch.float64))
    row = both.filter(site_index=1, variant="control", metric="accuracy").row(0, named=True)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((float(low), float(high)))


def test_layer_against_layer(fitted: ProbeResults) -> None:
    table = compare_probes(
        fitted,
        left_where={"site": 2},
        right_where={"site": 0},
        n_resamples=300,
        metrics=["accuracy"],
    )
    assert table.columns[:3] == ["variant", "mask", "metric"]
    means = fitted.summary(ci=None).filter(split="test", metric="accuracy")
    for row in table.iter_rows(named=True):
        at = means.filter(variant=row["variant"])
        want = at.filter(site_index=2)["mean"].item() - at.filter(site_index=0)["mean"].item()
        assert row["difference"] == pytest.approx(want)
        assert row["ci_low"] <= row["difference"] <= row["ci_high"] and row["n_pairs"] == 2
    task = table.filter(variant="task").row(0, named=True)
    assert task["difference"] > 0.3 and task["p_value"] < 0.01  # site 2 has the class signal
    one = compare_probes(  # every grouping column fixed: one row per metric
        fitted,
        left_where={"site": 2, "variant": "task", "mask": 1.0},
        right_where={"site": 0, "variant": "task", "mask": 1.0},
        n_resamples=300,
        metrics=["accuracy"],
    )
    assert one.columns[0] == "metric" and one.height == 1
    assert one["difference"].item() == pytest.approx(task["difference"])


def test_selectivity_columns_equal_compare(fitted: ProbeResults) -> None:
    sel = fitted.selectivity(n_resamples=200).filter(split="test", metric="accuracy")
    direct = compare_probes(
        fitted,
        left_where={"variant": "task"},
        right_where={"variant": "control"},
        n_resamples=200,
        metrics=list(metric_names("item_sums", "classification")),
    ).filter(metric="accuracy")
    for row in sel.iter_rows(named=True):
        want = direct.filter(site=row["site_index"]).row(0, named=True)
        assert row["selectivity"] == pytest.approx(want["difference"])
        assert row["p_value"] == pytest.approx(want["p_value"])
        assert row["ci_low"] == pytest.approx(want["ci_low"])
    # the p-value is the permutation test of the two seeds' pairs, swapped together
    test = fitted.test
    assert test is not None
    frame = fitted.probes.filter(site=1).sort("seed")
    lp = torch.tensor(frame.filter(variant="task")["probe"].to_list())
    rp = torch.tensor(frame.filter(variant="control")["probe"].to_list())
    _, p = permutation_test(
        test.select(lp),
        test.select(rp),
        torch.full((1, 2), 0.5, dtype=torch.float64),
        SwapPatterns(test.n_items, 200, 0),
        head="classification",
        outputs=4,
        metrics=["accuracy"],
    )["accuracy"]
    assert sel.filter(site_index=1)["p_value"].item() == pytest.approx(float(p[0]))


def test_pretrained_against_random_is_paired_across_results(
    fitted: ProbeResults, data: Synthetic
) -> None:
    noise = torch.randn(data.feats.shape, generator=torch.Generator().manual_seed(9))
    grid = ProbeGrid(seeds=[0, 1], control=True)
    random = fit_probes(
        noise, data.labels, random_splits(N), grid, FAST, keys=data.keys, progress=False
    )
    table = fitted.compare(random, n_resamples=999, metrics=["accuracy"])
    assert table.height == 3 * 2  # site x variant (one mask)
    best = table.filter(site=2, variant="task").row(0, named=True)
    assert best["difference"] > 0.3 and best["p_holm"] < 0.05
    same = fitted.compare(fitted, n_resamples=50, metrics=["accuracy"], test="bootstrap")
    assert same["difference"].abs().max() < 1e-12
    other = fit_probes(
        data.feats,
        data.labels,
        random_splits(N, seed=1),
        grid,
        FAST,
        keys=data.keys,
        progress=False,
    )
    with pytest.raises(ProbeInputError, match="same test items"):
        fitted.compare(other)


def test_ambiguous_sides_and_missing_predictions(fitted: ProbeResults) -> None:
    with pytest.raises(ProbeConfigError, match="differ in"):
        compare_probes(fitted, left_where={"site": 2}, right_where={"site": 0}, by=["mask"])
    with pytest.raises(ProbeConfigError, match="no probe matches"):
        compare_probes(fitted, left_where={"site": 7})
    bare = ProbeResults(fitted.probes, fitted.metrics, fitted.weights)
    assert "ci_low" not in bare.summary(ci=None).columns
    with pytest.raises(ProbeConfigError, match="no test predictions"):
        bare.summary()


def test_concat_requires_the_same_items(fitted: ProbeResults) -> None:
    test = fitted.test
    assert test is not None
    shifted = TestPredictions(
        test.items + 1, test.pred, test.targets, test.target_row, test.head, test.outputs
    )
    with pytest.raises(ProbeInputError, match="same test items"):
        test.concat(shifted)
    both = test.concat(test)
    assert both.pred.shape[0] == 2 * test.pred.shape[0]
    assert torch.equal(both.truth()[test.pred.shape[0] :], test.truth())
