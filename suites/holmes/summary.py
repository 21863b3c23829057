"""Tables and plots of a Holmes leaderboard: rankings, Kendall τ, discriminability, FlashHolmes.

Written next to the leaderboard (`write_summary`), and again by `lingprobe report DIR`:
  ranking.parquet          mean winning rate and rank per model, overall and per phenomenon type
  kendall.parquet          Kendall τ between the type rankings and the overall ranking
  discriminability.parquet Kendall τ of each dataset's model ranking vs the overall ranking
  flash.parquet            reliability-efficiency curve (when several train fractions ran)
  ranking.png, types.png, layers.png (several layers), flash.png (several fractions)
Rankings use each model's ranked site (Holmes: the last layer) at train fraction 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from suites import plots
from suites.datasets import DataSource
from suites.holmes.flash import plot_curve, reliability_efficiency
from suites.holmes.published import published_flash_scores, published_scores
from suites.holmes.ranking import discriminability, mean_winning_rate, type_correlations
from suites.outputs import write_table


@dataclass(frozen=True)
class HolmesSummary:
    """The summary tables of one leaderboard (None where too few models or fractions ran)."""

    ranking: pl.DataFrame | None
    kendall: pl.DataFrame | None
    discriminability: pl.DataFrame | None
    flash: pl.DataFrame | None


def ranked_scores(board: pl.DataFrame, fraction: float = 1.0) -> pl.DataFrame:
    """One score per (dataset, model): the ranked site at `fraction`."""
    return board.filter(pl.col("ranked") & (pl.col("fraction") == fraction)).select(
        "dataset", "model", "score", "phenomenon_type"
    )


def summarize_scores(
    full: pl.DataFrame,
    reduced: pl.DataFrame | None = None,
    items: pl.DataFrame | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> HolmesSummary:
    """Rankings of `full` (dataset, model, score, phenomenon_type) and, given `reduced`
    (the same plus `fraction`), the reliability-efficiency curve."""
    if full["model"].n_unique() < 2:
        return HolmesSummary(None, None, None, None)
    overall = mean_winning_rate(full, ci=0.95, n_boot=n_boot, seed=seed).select(
        pl.lit("overall").alias("group"), pl.all()
    )
    per_type = mean_winning_rate(
        full, by="phenomenon_type", ci=0.95, n_boot=n_boot, seed=seed
    ).rename({"phenomenon_type": "group"})
    ranking = pl.concat([overall, per_type], how="vertical_relaxed")
    flash = None
    if reduced is not None and reduced.height:
        flash = reliability_efficiency(
            full.select("dataset", "model", "score"),
            reduced.select("dataset", "model", "score", "fraction"),
            items=items,
            n_boot=n_boot,
            seed=seed,
        )
    return HolmesSummary(ranking, type_correlations(full), discriminability(full), flash)


def summarize(board: pl.DataFrame, n_boot: int = 1000, seed: int = 0) -> HolmesSummary:
    """Rankings of a leaderboard and, with several train fractions, its FlashHolmes curve."""
    reduced = board.filter(pl.col("ranked") & (pl.col("fraction") < 1.0))
    items = reduced.select(
        "dataset", "model", "fraction", "n_train_used", "n_train", "n_dev", "n_test"
    )
    return summarize_scores(ranked_scores(board), reduced, items, n_boot, seed)


def write_summary(board: pl.DataFrame, folder: str | Path) -> HolmesSummary:
    """Write the summary tables and plots of a leaderboard into `folder`."""
    out = Path(folder)
    summary = summarize(board)
    _write(summary, ranked_scores(board), out, "Holmes (this run)")
    at_full = board.filter(pl.col("fraction") == 1.0)
    sites_per_model = at_full.group_by("model").agg(pl.col("site").n_unique())["site"]
    if sites_per_model.len() and int(sites_per_model.to_numpy().max()) > 1:
        per_layer = at_full.group_by("model", "part", "layer").agg(pl.col("score").mean())
        plots.layer_curves(
            per_layer,
            out / "layers.png",
            y="score",
            line=["model", "part"],
            title="Holmes (this run): mean score per layer",
            ylabel="mean score over datasets (macro-F1; Pearson for regression)",
        )
    return summary


def write_published(
    folder: str | Path,
    data: DataSource | str | Path | None = None,
    *,
    holmes_file: str | Path | None = None,
    flash_file: str | Path | None = None,
) -> HolmesSummary:
    """The same tables and plots for the published Holmes / FlashHolmes leaderboards.

    The leaderboards come from the dataset registry, or from `holmes_file` / `flash_file`.
    """
    full = published_scores(data, path=holmes_file)
    summary = summarize_scores(full, published_flash_scores(data, path=flash_file))
    _write(summary, full, Path(folder), "Holmes (published leaderboard)")
    return summary


def _write(summary: HolmesSummary, full: pl.DataFrame, out: Path, source: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in ("ranking", "kendall", "discriminability", "flash"):
        table = getattr(summary, name)
        if table is not None:
            write_table(table, out / f"{name}.parquet")
    datasets = full["dataset"].n_unique()
    order = None
    if summary.ranking is not None:
        overall = summary.ranking.filter(pl.col("group") == "overall")
        order = overall.sort("mwr", descending=True)["model"].to_list()
        plots.bars(
            overall,
            out / "ranking.png",
            label="model",
            value="mwr",
            interval=("ci_low", "ci_high"),
            title=f"{source}: models ranked by mean winning rate over {datasets} datasets"
            " (bars: 95% bootstrap interval over datasets)",
        )
    typed = full.with_columns(pl.col("phenomenon_type").fill_null("").replace("", "untyped"))
    plots.heatmap(
        typed,
        out / "types.png",
        rows="phenomenon_type",
        columns="model",
        value="score",
        title=f"{source}: mean score per phenomenon type (models by rank)",
        colorbar="mean score (macro-F1; Pearson for regression)",
        column_order=order,
    )
    if summary.flash is not None:
        plot_curve(summary.flash, out / "flash.png", title=f"{source}: reliability vs efficiency")


def print_summary(summary: HolmesSummary) -> None:
    """The overall ranking (top 10) and, with fractions, the FlashHolmes table, printed."""
    with pl.Config(tbl_rows=20, tbl_cols=12, fmt_str_lengths=60, tbl_width_chars=160):
        if summary.ranking is None:
            print("one model only: no ranking (run two or more models)")
            return
        overall = summary.ranking.filter(pl.col("group") == "overall").drop("group")
        print("overall ranking (mean winning rate [95% bootstrap interval over datasets], top 10):")
        print(
            overall.head(10).select(
                "model",
                mwr=pl.format(
                    "{} [{}, {}]",
                    pl.col("mwr").round(3),
                    pl.col("ci_low").round(3),
                    pl.col("ci_high").round(3),
                ),
                rank="rank",
                ranks=pl.format("{}-{}", pl.col("rank_low"), pl.col("rank_high")),
                n_datasets="n_datasets",
            )
        )
        if summary.flash is not None:
            print("\nreliability vs efficiency (FlashHolmes):")
            print(
                summary.flash.select(
                    "k",
                    "rank_resolution",
                    "ci_low",
                    "ci_high",
                    "mean_abs_shift",
                    "kendall_tau",
                    "n_datasets",
                    "train_share",
                )
            )
