"""FlashHolmes: how well a benchmark trained on 1/k of its training instances keeps the ranking.

Rank resolution (Perlitz et al. 2023; Holmes §6), as computed here:

1. Take the datasets and models the full and the reduced benchmark share. On each dataset, a
   model's win rate is its share of the other scored models it beats, ties ½
   (`suites.holmes.ranking.win_rates`), separately on the full and on the reduced scores.
2. Draw B bootstrap samples of the datasets (D draws with replacement, numpy
   `default_rng(seed)`); the *same* draw is used for both benchmarks (paired).
3. In each sample b, every model's mean winning rate over the drawn datasets gives its rank
   (1 = best, ties share their mean rank) on the full benchmark, `r_full(m, b)`, and on the
   reduced one, `r_red(m, b)`; the rank difference is `Δ(m, b) = r_red(m, b) − r_full(m, b)`.
4. A model's 95 % interval is [2.5 %, 97.5 %] quantiles of `Δ(m, ·)`; its resolution is the
   95 % quantile of `|Δ(m, ·)|` — the smallest radius around "same rank" that holds its rank
   difference with probability 0.95 (quantiles with numpy's default linear interpolation).
5. The benchmark's rank resolution is the mean of the models' resolutions. A resolution of 1:
   a model keeps its rank or swaps with a neighbour, with probability 0.95.
6. Its interval (`resolution_low`, `resolution_high`; curve columns `ci_low`, `ci_high`): a
   nested bootstrap (Davison & Hinkley 1997 §3.9). `n_outer` outer samples draw D datasets
   with replacement (numpy `default_rng([seed, 1])`); on each, steps 2–5 run again (the inner
   draws pick positions in the outer sample with the same B draws as step 2), giving one
   resolution per outer sample; the interval is their [2.5 %, 97.5 %] percentile range. It
   says how much the resolution itself would move on another sample of datasets like these.

The reliability-efficiency curve gives, per train fraction 1/k, the rank resolution, the
Kendall τ of the two overall rankings, and the compute: `train_share` = 1/k, the share of
training instances encoded and probed (the paper's "~3 % at 1/32"), `compute_saved` = 1 − 1/k;
for lingprobe runs also `encoded_share`, the share of all items (train, dev, test) encoded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
import polars as pl
from jaxtyping import Float

from suites.holmes.ranking import (
    bootstrap_mwr,
    check_scores,
    dataset_draws,
    kendall_tau,
    mwr_from_rates,
    ranks_of,
    win_rates,
)
from suites.plot_style import fit
from suites.plots import save_figure

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from suites.errors import TaskError

# Holmes (Waldis et al. 2024) §6: train fractions 1/2 ... 1/512.
FLASH_FRACTIONS = tuple(1 / 2**i for i in range(1, 10))
# Holmes §6 / Perlitz et al. (2023): the 95 % interval of the rank difference.
LEVEL = 0.95
# Bootstrap replicates over datasets (a choice of ours; the papers do not state B).
N_BOOT = 1000
# Outer samples of the nested bootstrap of the resolution's interval (a choice of ours).
N_OUTER = 200
OUTER_CHUNK = 16  # outer samples ranked together (memory: chunk x B x models)


@dataclass(frozen=True)
class RankResolution:
    """The result of `rank_resolution`: the headline number and the per-model table."""

    resolution: float  # mean over models of the per-model resolution
    per_model: pl.DataFrame  # model, rank_full, rank_reduced, shift, low, high, resolution
    n_datasets: int
    n_models: int
    n_boot: int
    level: float
    resolution_low: float = float("nan")  # nested-bootstrap interval of `resolution`
    resolution_high: float = float("nan")
    n_outer: int = 0


RateMatrix = Float[np.ndarray, "dataset model"]


def paired_rates(
    full: pl.DataFrame, reduced: pl.DataFrame
) -> tuple[list[str], list[str], RateMatrix, RateMatrix]:
    """(datasets, models, full win rates, reduced win rates) over the shared datasets/models."""
    a, b = check_scores(full), check_scores(reduced)
    datasets = sorted(set(a["dataset"].to_list()) & set(b["dataset"].to_list()))
    models = sorted(set(a["model"].to_list()) & set(b["model"].to_list()))
    if len(datasets) < 1 or len(models) < 2:
        raise TaskError(
            f"the full and reduced scores share {len(datasets)} datasets and {len(models)}"
            " models; rank resolution needs at least one dataset and two models in both"
        )
    mats = []
    for frame in (a, b):
        cells = frame.filter(pl.col("dataset").is_in(datasets) & pl.col("model").is_in(models))
        index = {d: i for i, d in enumerate(datasets)}
        col = {m: j for j, m in enumerate(models)}
        matrix = np.full((len(datasets), len(models)), np.nan)
        for dataset, model, score in cells.select("dataset", "model", "score").iter_rows():
            if score is not None:
                matrix[index[dataset], col[model]] = score
        mats.append(win_rates(matrix))
    return datasets, models, mats[0], mats[1]


def rank_resolution(
    full: pl.DataFrame,
    reduced: pl.DataFrame,
    *,
    n_boot: int = N_BOOT,
    level: float = LEVEL,
    seed: int = 0,
    n_outer: int = N_OUTER,
) -> RankResolution:
    """Rank resolution of `reduced` against `full` (long frames: dataset, model, score), with
    its nested-bootstrap interval (`n_outer` outer samples; 0: no interval, NaN bounds)."""
    if n_boot < 1 or not 0 < level < 1 or n_outer < 0:
        raise TaskError(
            f"n_boot={n_boot}, level={level}, n_outer={n_outer}: give n_boot >= 1,"
            " 0 < level < 1 and n_outer >= 0"
        )
    _, models, rates_full, rates_red = paired_rates(full, reduced)
    n_data = rates_full.shape[0]
    counts = dataset_draws(n_data, n_boot, seed)
    shifts = rank_shifts(rates_full, rates_red, counts)
    tail = (1 - level) / 2
    low, high = np.quantile(shifts, [tail, 1 - tail], axis=0)
    radius = np.quantile(np.abs(shifts), level, axis=0)
    outer = outer_resolutions(rates_full, rates_red, counts, n_outer, level, seed)
    bounds = np.quantile(outer, [tail, 1 - tail]) if n_outer else [np.nan, np.nan]
    rank_full = ranks_of(mwr_from_rates(rates_full))
    rank_red = ranks_of(mwr_from_rates(rates_red))
    per_model = pl.DataFrame(
        {
            "model": models,
            "rank_full": rank_full,
            "rank_reduced": rank_red,
            "shift": rank_red - rank_full,
            "low": low,
            "high": high,
            "resolution": radius,
        }
    ).sort("rank_full")
    return RankResolution(
        float(radius.mean()),
        per_model,
        n_data,
        len(models),
        n_boot,
        level,
        float(bounds[0]),
        float(bounds[1]),
        n_outer,
    )


def rank_shifts(
    rates_full: RateMatrix, rates_red: RateMatrix, counts: Float[np.ndarray, "boot dataset"]
) -> Float[np.ndarray, "boot model"]:
    """Reduced minus full rank of every model in every bootstrap sample."""
    return ranks_of(bootstrap_mwr(rates_red, counts)) - ranks_of(bootstrap_mwr(rates_full, counts))


def outer_resolutions(
    rates_full: RateMatrix,
    rates_red: RateMatrix,
    counts: Float[np.ndarray, "boot dataset"],
    n_outer: int,
    level: float,
    seed: int,
) -> Float[np.ndarray, " outer"]:
    """The rank resolution on each of `n_outer` resampled sets of datasets (step 6).

    An outer sample is the rate matrices' rows at the drawn datasets; the inner draws
    `counts` (per position) apply to it as they apply to the full set in step 2."""
    n_data = rates_full.shape[0]
    picks = np.random.default_rng([seed, 1]).integers(0, n_data, size=(n_outer, n_data))
    out = np.empty(n_outer)
    for start in range(0, n_outer, OUTER_CHUNK):
        chosen = picks[start : start + OUTER_CHUNK]
        shifts = [
            ranks_of(_stacked_mwr(rates[chosen], counts)) for rates in (rates_red, rates_full)
        ]
        radius = np.quantile(np.abs(shifts[0] - shifts[1]), level, axis=1)  # [chunk, model]
        out[start : start + len(chosen)] = radius.mean(-1)
    return out


def _stacked_mwr(
    rates: Float[np.ndarray, "outer dataset model"], counts: Float[np.ndarray, "boot dataset"]
) -> Float[np.ndarray, "outer boot model"]:
    """`bootstrap_mwr` of several rate matrices at once (one matrix product)."""
    n_outer, n_data, n_models = rates.shape
    flat = rates.transpose(1, 0, 2).reshape(n_data, n_outer * n_models)
    mwr = bootstrap_mwr(flat, counts)  # [boot, outer * model]
    return mwr.reshape(-1, n_outer, n_models).transpose(1, 0, 2)


def reliability_efficiency(
    full: pl.DataFrame,
    reduced: pl.DataFrame,
    *,
    items: pl.DataFrame | None = None,
    n_boot: int = N_BOOT,
    level: float = LEVEL,
    seed: int = 0,
    n_outer: int = N_OUTER,
) -> pl.DataFrame:
    """One row per train fraction of `reduced` (long frame with a `fraction` column).

    Columns: fraction, k, rank_resolution, ci_low, ci_high (its nested-bootstrap interval,
    NaN with `n_outer=0`), max_resolution, mean_abs_shift (the unresampled
    mean |rank difference|), kendall_tau, tau_p_value,
    n_datasets, n_models, train_share, compute_saved, and `encoded_share` when `items`
    (dataset, fraction, n_train_used, n_train, n_dev, n_test) is given.
    """
    rows = []
    for fraction in sorted(reduced["fraction"].unique().to_list(), reverse=True):
        part = reduced.filter(pl.col("fraction") == fraction)
        result = rank_resolution(full, part, n_boot=n_boot, level=level, seed=seed, n_outer=n_outer)
        shared = result.per_model
        tau, p, _ = kendall_tau(
            dict(zip(shared["model"], -shared["rank_full"])),
            dict(zip(shared["model"], -shared["rank_reduced"])),
        )
        rows.append(
            {
                "fraction": float(fraction),
                "k": round(1 / fraction),
                "rank_resolution": result.resolution,
                "ci_low": result.resolution_low,
                "ci_high": result.resolution_high,
                "max_resolution": float(np.max(shared["resolution"].to_numpy())),
                "mean_abs_shift": float(np.mean(np.abs(shared["shift"].to_numpy()))),
                "kendall_tau": tau,
                "tau_p_value": p,
                "n_datasets": result.n_datasets,
                "n_models": result.n_models,
                "train_share": float(fraction),
                "compute_saved": 1.0 - float(fraction),
            }
        )
    curve = pl.DataFrame(rows)
    if items is not None:
        curve = curve.join(encoded_share(items), on="fraction", how="left")
    return curve


def encoded_share(items: pl.DataFrame) -> pl.DataFrame:
    """Per fraction, the share of all items (train used + dev + test) over the full count."""
    totals = items.group_by("fraction").agg(
        used=(pl.col("n_train_used") + pl.col("n_dev") + pl.col("n_test")).sum(),
        full=(pl.col("n_train") + pl.col("n_dev") + pl.col("n_test")).sum(),
    )
    return totals.select("fraction", encoded_share=pl.col("used") / pl.col("full"))


def plot_curve(curve: pl.DataFrame, path: str | Path, title: str = "") -> Path:
    """Rank resolution (left axis) and compute share (right axis) against the train fraction."""
    ordered = curve.sort("fraction")
    xs = ordered["fraction"].to_list()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.plot(xs, ordered["rank_resolution"].to_list(), marker="o", label="rank resolution")
    if "ci_low" in ordered.columns and ordered["ci_low"].is_not_nan().any():
        ax.fill_between(
            xs,
            ordered["ci_low"].to_list(),
            ordered["ci_high"].to_list(),
            alpha=0.2,
            label=f"{LEVEL:.0%} nested-bootstrap interval",
        )
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs, [f"1/{round(1 / x)}" if x < 1 else "1" for x in xs])
    ax.set_xlabel("train fraction")
    ax.set_ylabel(f"rank resolution ({LEVEL:.0%} of |rank difference|)")
    ax.grid(alpha=0.3)
    share = ax.twinx()
    column = "encoded_share" if "encoded_share" in ordered.columns else "train_share"
    words = {
        "encoded_share": "share of items encoded",
        "train_share": "share of train items used",
    }[column]
    share.plot(
        xs, ordered[column].to_list(), color="tab:orange", ls="--", marker="s", ms=3, label=words
    )
    share.set_ylabel(words)
    lines = ax.get_lines() + share.get_lines()
    ax.legend(lines, [str(line.get_label()) for line in lines], fontsize=8, loc="upper center")
    ax.set_title(title or "Reliability vs efficiency", fontsize=9)
    return save_figure(fit(fig), path)
