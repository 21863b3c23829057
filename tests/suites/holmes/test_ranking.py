"""Mean winning rate, Kendall τ and discriminability against hand computations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from scipy import stats

from suites.holmes.published import published_scores
from suites.holmes.ranking import (
    RankingError,
    against_external,
    dataset_draws,
    discriminability,
    kendall_tau,
    mean_winning_rate,
    ranks_of,
    score_matrix,
    type_correlations,
    win_rates,
)
from tests.suites.holmes.leaderboards import DATASETS, MISSING, MODELS, write_leaderboards

# Three datasets, four models; d2 has a tie (A = B) and d3 lacks model D.
SCORES = pl.DataFrame(
    {
        "dataset": ["d1"] * 4 + ["d2"] * 4 + ["d3"] * 3,
        "model": ["A", "B", "C", "D", "A", "B", "C", "D", "A", "B", "C"],
        "score": [0.9, 0.8, 0.7, 0.1, 0.5, 0.5, 0.9, 0.2, 0.3, 0.6, 0.1],
        "phenomenon_type": ["syntax"] * 8 + ["semantics"] * 3,
    }
)


def test_mean_winning_rate_by_hand():
    # d1: A beats 3/3, B 2/3, C 1/3, D 0/3.
    # d2: C beats 3/3; A and B tie (½ each) and beat D: (1 + ½)/3; D 0/3.
    # d3 (A, B, C only): B 2/2, A 1/2, C 0/2.
    expected = {
        "A": (1 + 1.5 / 3 + 0.5) / 3,
        "B": (2 / 3 + 1.5 / 3 + 1) / 3,
        "C": (1 / 3 + 1 + 0) / 3,
        "D": (0 + 0) / 2,
    }
    table = mean_winning_rate(SCORES)
    got = dict(zip(table["model"], table["mwr"]))
    assert got == pytest.approx(expected)
    assert dict(zip(table["model"], table["n_datasets"])) == {"A": 3, "B": 3, "C": 3, "D": 2}
    # B (0.7222) > A (0.6667) > C (0.4444) > D (0)
    assert table["model"].to_list() == ["B", "A", "C", "D"]
    assert table["rank"].to_list() == [1.0, 2.0, 3.0, 4.0]


def test_mean_winning_rate_per_type_and_tied_ranks():
    per_type = mean_winning_rate(SCORES, by="phenomenon_type")
    semantics = per_type.filter(pl.col("phenomenon_type") == "semantics")
    assert dict(zip(semantics["model"], semantics["mwr"])) == {"B": 1.0, "A": 0.5, "C": 0.0}
    tied = pl.DataFrame({"dataset": ["x", "x"], "model": ["P", "Q"], "score": [0.4, 0.4]})
    ranks = mean_winning_rate(tied)
    assert ranks["mwr"].to_list() == [0.5, 0.5] and ranks["rank"].to_list() == [1.5, 1.5]


def _pairwise_mwr(frame: pl.DataFrame) -> dict[str, float]:
    """An independent mean winning rate: explicit loops over pairs of models."""
    by_dataset: dict[str, dict[str, float]] = {}
    for dataset, model, score in frame.select("dataset", "model", "score").iter_rows():
        if score is not None and not math.isnan(score):
            by_dataset.setdefault(dataset, {})[model] = score
    rates: dict[str, list[float]] = {}
    for scores in by_dataset.values():
        if len(scores) < 2:
            continue
        for model, mine in scores.items():
            wins = sum(
                1.0 if mine > s else 0.5 if mine == s else 0.0
                for other, s in scores.items()
                if other != model
            )
            rates.setdefault(model, []).append(wins / (len(scores) - 1))
    return {m: sum(r) / len(r) for m, r in rates.items()}


def test_mean_winning_rate_matches_pairwise_loops_on_a_leaderboard_file(tmp_path):
    holmes, _ = write_leaderboards(tmp_path)
    scores = published_scores(path=holmes)
    assert scores.columns == [
        "dataset",
        "phenomenon_type",
        "phenomenon",
        "probe_type",
        "fraction",
        "model",
        "score",
    ]
    table = mean_winning_rate(scores)
    assert table.height == len(MODELS)
    assert dict(zip(table["model"], table["mwr"])) == pytest.approx(_pairwise_mwr(scores))
    # the model without a score on one dataset is ranked on the other datasets
    assert table.filter(pl.col("n_datasets") == DATASETS - 1)["model"].to_list() == [MISSING[0]]
    assert table["rank"].to_list() == sorted(table["rank"].to_list())
    assert table["model"][0] == MODELS[0]


def _tau_by_hand(x: list[float], y: list[float]) -> float:
    """Kendall τ-a (no ties): (concordant − discordant) / number of pairs."""
    pairs = list(itertools.combinations(range(len(x)), 2))
    sign = [np.sign((x[i] - x[j]) * (y[i] - y[j])) for i, j in pairs]
    return float(sum(sign) / len(pairs))


def test_kendall_tau_by_hand():
    left = {"A": 4.0, "B": 3.0, "C": 2.0, "D": 1.0, "E": 0.0}
    right = {"A": 3.0, "B": 4.0, "C": 2.0, "D": 0.0, "E": 1.0, "F": 9.0}  # F not shared
    tau, p, n = kendall_tau(left, right)
    models = sorted(left)
    assert n == 5
    assert tau == pytest.approx(_tau_by_hand([left[m] for m in models], [right[m] for m in models]))
    assert tau == pytest.approx(0.6)  # 8 concordant, 2 discordant pairs
    assert 0 < p < 1
    assert kendall_tau({"A": 1.0}, {"A": 2.0})[2] == 1


def test_type_correlations_and_external():
    table = type_correlations(SCORES)
    assert set(table["left"]) == {"overall", "syntax", "semantics"}
    diagonal = table.filter(pl.col("left") == pl.col("right"))
    assert diagonal["tau"].to_list() == pytest.approx([1.0] * 3)
    syntax = mean_winning_rate(SCORES.filter(pl.col("phenomenon_type") == "syntax"))
    overall = mean_winning_rate(SCORES)
    row = table.filter((pl.col("left") == "syntax") & (pl.col("right") == "overall"))
    assert row["tau"].item() == pytest.approx(kendall_tau(syntax, overall)[0])
    external = against_external(SCORES, {"A": 1.0, "B": 2.0, "C": 0.5, "D": 0.0})
    # overall order B > A > C > D equals the external order: τ = 1
    assert external.filter(pl.col("ranking") == "overall")["tau"].item() == pytest.approx(1.0)


def test_discriminability_by_hand():
    table = discriminability(SCORES)
    overall = dict(zip(*mean_winning_rate(SCORES).select("model", "mwr").to_dict().values()))
    d1 = table.filter(pl.col("dataset") == "d1").row(0, named=True)
    # d1 orders A > B > C > D; overall B > A > C > D: one discordant pair of six -> τ = 4/6
    assert d1["tau"] == pytest.approx(
        _tau_by_hand([0.9, 0.8, 0.7, 0.1], [overall[m] for m in "ABCD"])
    )
    assert d1["tau"] == pytest.approx(4 / 6)
    assert d1["phenomenon_type"] == "syntax" and d1["n_models"] == 4
    # d3 scores B .6 > A .3 > C .1, the overall order of those three (D unscored): τ = 1
    d3 = table.filter(pl.col("dataset") == "d3").row(0, named=True)
    assert d3["n_models"] == 3 and d3["tau"] == pytest.approx(1.0)
    # d2: C > A = B > D against B > A > C > D, by hand with the tie-corrected τ-b
    d2 = table.filter(pl.col("dataset") == "d2")["tau"].item()
    x, y = [0.5, 0.5, 0.9, 0.2], [overall[m] for m in "ABCD"]
    pairs = list(itertools.combinations(range(4), 2))
    s = sum(np.sign((x[i] - x[j]) * (y[i] - y[j])) for i, j in pairs)
    ties_x = sum(x[i] == x[j] for i, j in pairs)
    assert d2 == pytest.approx(s / math.sqrt((len(pairs) - ties_x) * len(pairs)))


def test_discriminability_leave_one_out():
    loo = discriminability(SCORES, leave_out=True)
    rest = SCORES.filter(pl.col("dataset") != "d1")
    overall = dict(zip(*mean_winning_rate(rest).select("model", "mwr").to_dict().values()))
    d1 = loo.filter(pl.col("dataset") == "d1")["tau"].item()
    assert d1 == pytest.approx(kendall_tau({"A": 0.9, "B": 0.8, "C": 0.7, "D": 0.1}, overall)[0])


def test_bad_tables_raise():
    with pytest.raises(RankingError, match="lack columns"):
        mean_winning_rate(SCORES.drop("score"))
    doubled = pl.concat([SCORES, SCORES.head(1)])
    with pytest.raises(RankingError, match=r"dataset 'd1' has 2 scores for model 'A'"):
        mean_winning_rate(doubled)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_mwr_intervals_equal_scipy_bootstrap_over_datasets(method):
    """Every model scored everywhere: a model's mwr is the mean of its per-dataset win rates,
    and numpy `default_rng(seed)` draws the same dataset indices as scipy.stats.bootstrap."""
    rng = np.random.default_rng(4)
    scores = pl.DataFrame(
        [
            {"dataset": f"d{d}", "model": m, "score": float(rng.random())}
            for d in range(12)
            for m in "ABCDE"
        ]
    )
    table = mean_winning_rate(scores, ci=0.9, n_boot=299, method=method, seed=3)
    _, models, matrix = score_matrix(scores)
    rates = win_rates(matrix)
    for j, model in enumerate(models):
        res = stats.bootstrap(
            (rates[:, j],),
            np.mean,
            n_resamples=299,
            confidence_level=0.9,
            method=method,
            rng=np.random.default_rng(3),
        )
        row = table.filter(pl.col("model") == model).row(0, named=True)
        want = (res.confidence_interval.low, res.confidence_interval.high)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(want, abs=1e-12)
    # rank interval: percentile of the ranks in the same draws, by a plain loop
    counts = dataset_draws(12, 299, 3)
    ranks = np.array([ranks_of((c[:, None] * rates).sum(0) / c.sum()) for c in counts])
    low, high = np.quantile(ranks, [0.05, 0.95], axis=0)
    for j, model in enumerate(models):
        row = table.filter(pl.col("model") == model).row(0, named=True)
        assert (row["rank_low"], row["rank_high"]) == pytest.approx((low[j], high[j]))
    assert mean_winning_rate(scores).columns == ["model", "mwr", "n_datasets", "rank"]
    per_type = mean_winning_rate(SCORES, by="phenomenon_type", ci=0.95, n_boot=50)
    syntax = per_type.filter(pl.col("phenomenon_type") == "syntax")
    assert syntax["ci_low"].is_nan().sum() == 0
    one_dataset = per_type.filter(pl.col("phenomenon_type") == "semantics")  # d3 only
    assert one_dataset["ci_low"].is_nan().all() and one_dataset["rank_high"].is_nan().all()
