"""Rank resolution and the reliability-efficiency curve against hand computations."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from suites.holmes.flash import (
    FLASH_FRACTIONS,
    encoded_share,
    outer_resolutions,
    paired_rates,
    plot_curve,
    rank_resolution,
    reliability_efficiency,
)
from suites.holmes.published import published_curve
from suites.holmes.ranking import dataset_draws
from tests.suites.holmes.leaderboards import DATASETS, MODELS, write_leaderboards


def _scores(rows: dict[str, dict[str, float]]) -> pl.DataFrame:
    return pl.DataFrame(
        [{"dataset": d, "model": m, "score": s} for d, by in rows.items() for m, s in by.items()]
    )


FULL = _scores({"d1": {"A": 3, "B": 2, "C": 1}, "d2": {"A": 3, "B": 2, "C": 1}})


def test_identical_benchmarks_have_resolution_zero():
    result = rank_resolution(FULL, FULL, n_boot=50)
    assert result.resolution == 0.0
    assert result.per_model["shift"].to_list() == [0.0, 0.0, 0.0]


def test_a_swap_on_every_dataset_moves_two_models_by_one():
    swapped = _scores({"d1": {"A": 2, "B": 3, "C": 1}, "d2": {"A": 2, "B": 3, "C": 1}})
    result = rank_resolution(FULL, swapped, n_boot=50)
    per_model = dict(zip(result.per_model["model"], result.per_model["resolution"]))
    assert per_model == {"A": 1.0, "B": 1.0, "C": 0.0}
    assert result.resolution == pytest.approx(2 / 3)


def test_a_swap_on_one_of_two_datasets_by_hand():
    """Reduced d2 swaps A and B. The four equally likely bootstrap draws of two datasets:
    (d1, d1): no change; (d2, d2): A and B swap (|Δ| = 1); (d1, d2), (d2, d1): A and B tie at
    mwr 0.75 (|Δ| = 0.5). So |Δ_A| is 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4: its 95 %
    quantile is 1; Δ_A's 2.5 % and 97.5 % quantiles are 0 and 1; C never moves.
    Without resampling A and B tie: shift +0.5 / −0.5."""
    reduced = _scores({"d1": {"A": 3, "B": 2, "C": 1}, "d2": {"A": 2, "B": 3, "C": 1}})
    result = rank_resolution(FULL, reduced, n_boot=2000, seed=1)
    rows = {r["model"]: r for r in result.per_model.iter_rows(named=True)}
    assert rows["A"]["resolution"] == 1.0 and rows["B"]["resolution"] == 1.0
    assert rows["C"]["resolution"] == 0.0
    assert (rows["A"]["low"], rows["A"]["high"]) == (0.0, 1.0)
    assert (rows["B"]["low"], rows["B"]["high"]) == (-1.0, 0.0)
    assert (rows["A"]["shift"], rows["B"]["shift"]) == (0.5, -0.5)
    assert result.resolution == pytest.approx(2 / 3)
    assert (result.n_datasets, result.n_models) == (2, 3)


def test_bootstrap_is_seeded_and_uses_shared_datasets_and_models():
    extra = pl.concat([FULL, _scores({"d9": {"A": 1, "Z": 5}})])
    reduced = _scores({"d1": {"A": 1, "B": 2, "C": 3}, "d2": {"A": 3, "B": 1, "C": 2}})
    one = rank_resolution(extra, reduced, n_boot=200, seed=3)
    two = rank_resolution(extra, reduced, n_boot=200, seed=3)
    assert one.per_model.equals(two.per_model)
    assert (one.n_datasets, one.n_models) == (2, 3)  # d9 and Z are not in both
    with pytest.raises(ValueError, match="share 0 datasets"):
        rank_resolution(FULL, _scores({"dx": {"A": 1, "B": 2}}))


def test_reliability_efficiency_table_and_encoded_share(tmp_path):
    reduced = pl.concat(
        [
            FULL.with_columns(fraction=pl.lit(0.5)),
            _scores({"d1": {"A": 2, "B": 3, "C": 1}, "d2": {"A": 2, "B": 3, "C": 1}}).with_columns(
                fraction=pl.lit(0.25)
            ),
        ]
    )
    items = pl.DataFrame(
        {
            "dataset": ["d1", "d2", "d1", "d2"],
            "fraction": [0.5, 0.5, 0.25, 0.25],
            "n_train_used": [35, 70, 18, 35],
            "n_train": [70, 140, 70, 140],
            "n_dev": [10, 20, 10, 20],
            "n_test": [20, 40, 20, 40],
        }
    )
    curve = reliability_efficiency(FULL, reduced, items=items, n_boot=100)
    assert curve["k"].to_list() == [2, 4]
    assert curve["rank_resolution"].to_list() == pytest.approx([0.0, 2 / 3])
    assert curve["kendall_tau"].to_list() == pytest.approx([1.0, 1 / 3])
    assert curve["compute_saved"].to_list() == [0.5, 0.75]
    assert curve["ci_low"].to_list()[0] == 0.0 and curve["ci_high"].to_list()[0] == 0.0
    # (35 + 10 + 20 + 70 + 20 + 40) / (100 + 200) at 1/2; (18 + 30 + 35 + 60) / 300 at 1/4
    assert curve["encoded_share"].to_list() == pytest.approx([195 / 300, 143 / 300])
    assert encoded_share(items).height == 2
    assert plot_curve(curve, tmp_path / "flash.png").stat().st_size > 0


def test_published_curve_of_leaderboard_files(tmp_path):
    holmes, flash = write_leaderboards(tmp_path)
    curve = published_curve(holmes_file=holmes, flash_file=flash, n_boot=100)
    assert curve["k"].to_list() == [round(1 / f) for f in FLASH_FRACTIONS]
    assert curve["n_models"].to_list() == [len(MODELS)] * 9  # FLASH_ONLY is not in both files
    assert curve["n_datasets"].max() == DATASETS
    assert np.all(curve["kendall_tau"].to_numpy() > 0.5)
    # less training data, a coarser ranking: 1/2 resolves ranks better than 1/512
    assert curve["rank_resolution"][0] < curve["rank_resolution"][-1]


def test_resolution_interval_by_hand():
    """The swap-on-d2 case again: an outer sample (d1, d1) has resolution 0, (d2, d2) has A and
    B swapped in every inner draw (2/3), and (d1, d2) in either order is the case above (2/3).
    So the outer resolutions are 0 (probability 1/4) or 2/3: the 95 % interval is [0, 2/3]."""
    reduced = _scores({"d1": {"A": 3, "B": 2, "C": 1}, "d2": {"A": 2, "B": 3, "C": 1}})
    result = rank_resolution(FULL, reduced, n_boot=400, seed=1, n_outer=200)
    assert (result.resolution_low, result.resolution_high) == pytest.approx((0.0, 2 / 3))
    assert result.n_outer == 200
    same = rank_resolution(FULL, FULL, n_boot=50, n_outer=20)
    assert (same.resolution_low, same.resolution_high) == (0.0, 0.0)
    none = rank_resolution(FULL, reduced, n_boot=50, n_outer=0)
    assert np.isnan(none.resolution_low) and np.isnan(none.resolution_high)


def test_outer_resolutions_equal_rank_resolution_on_resampled_datasets():
    """Each outer sample equals `rank_resolution` run on a table of the drawn datasets (named
    by position, so that its inner draws pick the same positions)."""
    rng = np.random.default_rng(5)
    rows = {f"d{i}": {m: float(rng.random()) for m in "ABCDE"} for i in range(6)}
    noisy = {d: {m: s + 0.3 * float(rng.random()) for m, s in by.items()} for d, by in rows.items()}
    full, reduced = _scores(rows), _scores(noisy)
    _, _, rates_full, rates_red = paired_rates(full, reduced)
    counts = dataset_draws(6, 100, 2)
    got = outer_resolutions(rates_full, rates_red, counts, 5, 0.95, seed=2)
    picks = np.random.default_rng([2, 1]).integers(0, 6, size=(5, 6))
    for value, pick in zip(got, picks):
        rename = {f"p{pos}": f"d{d}" for pos, d in enumerate(pick)}
        tables = [_scores({p: table[d] for p, d in rename.items()}) for table in (rows, noisy)]
        again = rank_resolution(*tables, n_boot=100, seed=2, n_outer=0)
        assert value == pytest.approx(again.resolution)
