"""Benchmark rankings: mean winning rate, Kendall τ between rankings, dataset discriminability.

Input is a long polars frame with one score per (dataset, model): columns `dataset`, `model`,
`score` (higher is better; null or NaN = the model was not scored on that dataset), plus any
grouping column such as `phenomenon_type`.

Definitions (Holmes, Waldis et al. 2024 §4.4, after HELM's mean win rate, Liang et al. 2023):

* win rate of model m on dataset d: among the models scored on d, the share of the *other*
  models that m beats, a tie (exactly equal scores) counting one half:
  `w(m, d) = (#{m' : s(m') < s(m)} + ½ #{m' ≠ m : s(m') = s(m)}) / (n_d − 1)`.
  Datasets with fewer than two scored models are skipped.
* mean winning rate `mwr(m)`: the mean of `w(m, d)` over the datasets d that scored m
  (overall, or within each group such as a phenomenon type).
* rank: 1 for the highest mwr; tied models share the mean of their ranks.
* discriminability of dataset d (Holmes §5 ii, after Rodriguez et al. 2021): Kendall τ-b
  between the models' scores on d and their overall mwr (over the models scored on d).
* uncertainty (`mean_winning_rate(..., ci=0.95)`): a bootstrap over datasets (D draws with
  replacement, numpy `default_rng(seed)`; the same draws for every model, so the ranking is
  resampled as a whole). Each dataset keeps its win rates (computed among all models scored
  on it); a replicate's mwr is the mean over the drawn datasets. `ci_low`/`ci_high`: BCa
  (jackknife over datasets) or percentile interval of the mwr (`probes.bootstrap`, as
  `scipy.stats.bootstrap`); `rank_low`/`rank_high`: percentile interval of the rank. The
  interval is for the mwr over a population of datasets like these, the models fixed. It is
  NaN for a model that some replicate leaves without any scored dataset, and for a group of
  fewer than two datasets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl
import torch
from jaxtyping import Float

from lingprobe.errors import LingprobeError
from probes.stats import IntervalMethod, Replicates, confidence_interval

SCORE_COLUMNS = ("dataset", "model", "score")


class RankingError(LingprobeError, ValueError):
    """A scores table cannot be ranked; the message names the problem and the fix."""


def check_scores(scores: pl.DataFrame, extra: Sequence[str] = ()) -> pl.DataFrame:
    """`scores` with its needed columns verified, `score` as float and one row per cell."""
    needed = [*SCORE_COLUMNS, *extra]
    missing = [c for c in needed if c not in scores.columns]
    if missing:
        raise RankingError(
            f"scores lack columns {missing} (have {scores.columns}); give a long frame with"
            " dataset, model, score"
        )
    frame = scores.with_columns(pl.col("score").cast(pl.Float64).fill_nan(None))
    duplicated = frame.group_by("dataset", "model").len().filter(pl.col("len") > 1)
    if duplicated.height:
        first = duplicated.row(0, named=True)
        raise RankingError(
            f"dataset {first['dataset']!r} has {first['len']} scores for model"
            f" {first['model']!r}; keep one row per (dataset, model), e.g. filter one site"
        )
    return frame


def score_matrix(
    scores: pl.DataFrame, models: Sequence[str] | None = None
) -> tuple[list[str], list[str], Float[np.ndarray, "dataset model"]]:
    """(datasets, models, matrix) with NaN where a model has no score on a dataset."""
    frame = check_scores(scores)
    datasets = sorted(frame["dataset"].unique().to_list())
    names = list(models) if models is not None else sorted(frame["model"].unique().to_list())
    row = {d: i for i, d in enumerate(datasets)}
    col = {m: j for j, m in enumerate(names)}
    matrix = np.full((len(datasets), len(names)), np.nan)
    for dataset, model, score in frame.select(SCORE_COLUMNS).iter_rows():
        if model in col and score is not None:
            matrix[row[dataset], col[model]] = score
    return datasets, names, matrix


def win_rates(matrix: Float[np.ndarray, "dataset model"]) -> Float[np.ndarray, "dataset model"]:
    """Per dataset, each scored model's share of other scored models it beats (ties ½).

    NaN where the model is unscored or the dataset has fewer than two scored models.
    The share equals `(average ascending rank − 1) / (n − 1)` among the scored models.
    """
    from scipy import stats  # on first use: scipy.stats is 68 MB resident, needed here only

    rates = np.full(matrix.shape, np.nan)
    for d, row in enumerate(matrix):
        scored = np.isfinite(row)
        n = int(scored.sum())
        if n >= 2:
            rates[d, scored] = (stats.rankdata(row[scored], method="average") - 1) / (n - 1)
    return rates


def mwr_from_rates(rates: Float[np.ndarray, "dataset model"]) -> Float[np.ndarray, " model"]:
    """Mean over datasets of each model's win rates (NaN for a model never ranked)."""
    counted = np.isfinite(rates)
    total = np.where(counted, rates, 0.0).sum(axis=0)
    n = counted.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / np.maximum(n, 1), np.nan)


def dataset_draws(n_datasets: int, n_boot: int, seed: int) -> Float[np.ndarray, "boot dataset"]:
    """How often each dataset is drawn in each of `n_boot` bootstrap samples (D draws with
    replacement from numpy `default_rng(seed)`)."""
    draws = np.random.default_rng(seed).integers(0, n_datasets, size=(n_boot, n_datasets))
    counts = np.zeros((n_boot, n_datasets))
    np.add.at(counts, (np.arange(n_boot)[:, None], draws), 1.0)
    return counts


def bootstrap_mwr(
    rates: Float[np.ndarray, "dataset model"], counts: Float[np.ndarray, "boot dataset"]
) -> Float[np.ndarray, "boot model"]:
    """Mean winning rates over bootstrap samples given as per-dataset draw counts."""
    scored = np.isfinite(rates)
    total = counts @ np.where(scored, rates, 0.0)
    n = counts @ scored.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / np.maximum(n, 1.0), np.nan)


def mwr_intervals(
    rates: Float[np.ndarray, "dataset model"],
    *,
    n_boot: int = 1000,
    level: float = 0.95,
    method: IntervalMethod = "bca",
    seed: int = 0,
) -> dict[str, Float[np.ndarray, " model"]]:
    """`ci_low`, `ci_high` of each model's mwr and `rank_low`, `rank_high` of its rank, from
    a bootstrap over the datasets (rows of `rates`); NaN with fewer than two datasets (as
    scipy, a bootstrap needs two observations)."""
    n_data = rates.shape[0]
    if n_data < 2:
        nan = np.full(rates.shape[1], np.nan)
        return {"ci_low": nan, "ci_high": nan, "rank_low": nan, "rank_high": nan}
    boot = bootstrap_mwr(rates, dataset_draws(n_data, n_boot, seed))
    jack = bootstrap_mwr(rates, 1.0 - np.eye(n_data))  # each dataset left out once
    reps = Replicates(
        torch.from_numpy(mwr_from_rates(rates)),
        torch.from_numpy(boot.T.copy()),
        torch.from_numpy(jack.T.copy()),
    )
    low, high = confidence_interval(reps, level, method)
    tail = (1 - level) / 2
    rank_low, rank_high = np.quantile(ranks_of(boot), [tail, 1 - tail], axis=0)
    return {
        "ci_low": low.numpy(),
        "ci_high": high.numpy(),
        "rank_low": rank_low,
        "rank_high": rank_high,
    }


def ranks_of(values: Float[np.ndarray, "*batch model"]) -> Float[np.ndarray, "*batch model"]:
    """Rank 1 for the largest value, tied values share their mean rank; NaN ranks last.

    Ranks along the last axis (one ranking per row of a batch).
    """
    from scipy import stats

    filled = np.where(np.isfinite(values), values, -np.inf)
    return stats.rankdata(-filled, method="average", axis=-1)


def mean_winning_rate(
    scores: pl.DataFrame,
    by: str | None = None,
    *,
    ci: float | None = None,
    n_boot: int = 1000,
    method: IntervalMethod = "bca",
    seed: int = 0,
) -> pl.DataFrame:
    """Mean winning rate per model (and per group of `by`, e.g. `phenomenon_type`).

    Returns `[by,] model, mwr, n_datasets, rank` sorted best first (within each group); with
    `ci` (e.g. 0.95) also `ci_low, ci_high, rank_low, rank_high` from a bootstrap over the
    datasets (of the group), see the module docstring.
    """
    frame = check_scores(scores, [by] if by else [])
    groups = (
        [(None, frame)]
        if by is None
        else [(key[0], rows) for key, rows in frame.group_by(by, maintain_order=True)]
    )
    parts = []
    for key, rows in groups:
        _datasets, models, matrix = score_matrix(rows)
        rates = win_rates(matrix)
        mwr = mwr_from_rates(rates)
        columns = {
            "model": models,
            "mwr": mwr,
            "n_datasets": np.isfinite(rates).sum(axis=0).astype(np.int64),
            "rank": ranks_of(mwr),
        }
        if ci is not None:
            columns |= mwr_intervals(rates, n_boot=n_boot, level=ci, method=method, seed=seed)
        part = pl.DataFrame(columns).filter(pl.col("n_datasets") > 0)
        if by is not None:
            part = part.select(pl.lit(key).alias(by), pl.all())
        parts.append(part.sort("rank", "model"))
    return pl.concat(parts)


def kendall_tau(
    left: Mapping[str, float] | pl.DataFrame,
    right: Mapping[str, float] | pl.DataFrame,
    value: str = "mwr",
) -> tuple[float, float, int]:
    """Kendall τ-b between two rankings over their common models: (τ, two-sided p, n models).

    Each ranking is `{model: value}` or a frame with `model` and `value` columns (higher =
    better; only the order matters). NaN τ when fewer than two models are shared.
    """
    from scipy import stats

    a, b = _as_mapping(left, value), _as_mapping(right, value)
    common = sorted(m for m in set(a) & set(b) if np.isfinite(a[m]) and np.isfinite(b[m]))
    if len(common) < 2:
        return float("nan"), float("nan"), len(common)
    result = stats.kendalltau([a[m] for m in common], [b[m] for m in common])
    return float(result.statistic), float(result.pvalue), len(common)


def type_correlations(scores: pl.DataFrame, by: str = "phenomenon_type") -> pl.DataFrame:
    """Kendall τ (and p) between the mwr rankings of every pair of groups and `overall`.

    Rows `left, right, tau, p_value, n_models` for every ordered pair, the diagonal included
    (as in Holmes Figure 10, left).
    """
    rankings = {"overall": mean_winning_rate(scores)}
    per_group = mean_winning_rate(scores, by=by)
    for key in sorted(per_group[by].unique().to_list()):
        rankings[str(key)] = per_group.filter(pl.col(by) == key)
    rows = []
    for left, a in rankings.items():
        for right, b in rankings.items():
            tau, p, n = kendall_tau(a, b)
            rows.append({"left": left, "right": right, "tau": tau, "p_value": p, "n_models": n})
    return pl.DataFrame(rows)


def against_external(
    scores: pl.DataFrame, external: Mapping[str, float], by: str | None = "phenomenon_type"
) -> pl.DataFrame:
    """Kendall τ between an external ranking (`{model: score}`) and the overall/group rankings."""
    rows = []
    tau, p, n = kendall_tau(mean_winning_rate(scores), external)
    rows.append({"ranking": "overall", "tau": tau, "p_value": p, "n_models": n})
    if by is not None:
        per_group = mean_winning_rate(scores, by=by)
        for key in sorted(per_group[by].unique().to_list()):
            tau, p, n = kendall_tau(per_group.filter(pl.col(by) == key), external)
            rows.append({"ranking": str(key), "tau": tau, "p_value": p, "n_models": n})
    return pl.DataFrame(rows)


def discriminability(scores: pl.DataFrame, leave_out: bool = False) -> pl.DataFrame:
    """Per dataset: Kendall τ-b (and p) of its model scores against the overall mwr.

    `leave_out=True` compares against the mwr over all *other* datasets instead.
    Returns `dataset, tau, p_value, n_models` (plus any per-dataset columns such as
    `phenomenon_type` that are constant within a dataset).
    """
    from scipy import stats

    frame = check_scores(scores)
    datasets, _models, matrix = score_matrix(frame)
    rates = win_rates(matrix)
    counted = np.isfinite(rates)
    total = np.where(counted, rates, 0.0).sum(axis=0)
    n = counted.sum(axis=0)
    rows = []
    for d, dataset in enumerate(datasets):
        if leave_out:
            rest_total = total - np.where(counted[d], rates[d], 0.0)
            rest_n = n - counted[d]
            with np.errstate(invalid="ignore", divide="ignore"):
                overall = np.where(rest_n > 0, rest_total / np.maximum(rest_n, 1), np.nan)
        else:
            overall = mwr_from_rates(rates)
        keep = np.isfinite(matrix[d]) & np.isfinite(overall)
        tau, p = float("nan"), float("nan")
        if keep.sum() >= 2:
            result = stats.kendalltau(matrix[d, keep], overall[keep])
            tau, p = float(result.statistic), float(result.pvalue)
        rows.append({"dataset": dataset, "tau": tau, "p_value": p, "n_models": int(keep.sum())})
    result = pl.DataFrame(rows)
    constant = [
        c
        for c in frame.columns
        if c not in (*SCORE_COLUMNS, "dataset")
        and frame.group_by("dataset").agg(pl.col(c).n_unique())[c].max() == 1
    ]
    if constant:
        per_dataset = frame.group_by("dataset").agg(pl.col(c).first() for c in constant)
        result = result.join(per_dataset, on="dataset", how="left")
    return result


def _as_mapping(ranking: Mapping[str, float] | pl.DataFrame, value: str) -> dict[str, float]:
    if isinstance(ranking, pl.DataFrame):
        if "model" not in ranking.columns or value not in ranking.columns:
            raise RankingError(
                f"a ranking frame needs columns model and {value!r} (has {ranking.columns})"
            )
        return {
            str(m): (float(v) if v is not None else float("nan"))
            for m, v in ranking.select("model", value).iter_rows()
        }
    return {str(m): float(v) for m, v in ranking.items()}
