"""Your model on the published Holmes leaderboard: rank it among the 57 published models.

`published_tasks` names every dataset lingprobe builds that the leaderboard also has (the task
list of `lingprobe run holmes --against-published`, the task group `published`).
`compare_to_published` takes a run's leaderboard (`run_holmes`), keeps the datasets it shares
with the published one, and ranks the run's models together with the published models by mean
winning rate over those shared datasets (`suites.holmes.ranking.mean_winning_rate`, Holmes
§4.4), with a bootstrap interval of the mwr and of the rank over the datasets. The run's models
are renamed `<model> (this run)` so that a model also on the leaderboard appears twice, once
with each protocol.

The ranking compares numbers made by two protocols; `protocol_differences` lists where this run's
differs from the paper's (Waldis et al. 2024 §4.3-4.4, App. A.2) as far as the paper states it,
and every report of the ranking prints the list beside it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from lingprobe.atomic import atomic_write_bytes
from suites.datasets import DataSource
from suites.holmes.catalog import available_tasks
from suites.holmes.inventory import holmes_datasets
from suites.holmes.published import published_scores
from suites.holmes.ranking import mean_winning_rate
from suites.holmes.run import HolmesConfig, HolmesRunError
from suites.holmes.summary import ranked_scores
from suites.outputs import write_table

THIS_RUN = " (this run)"
TABLE, PAGE = "against_published.parquet", "against_published.md"
# the table's parquet metadata: the protocol differences and shared datasets, as JSON lists
DIFFERENCES, SHARED = "lingprobe.protocol_differences", "lingprobe.shared_datasets"
RECORD = "against_published.json"  # in each unit folder of a run that asked for the ranking
PAPER_SEEDS = 5  # Holmes App. A.2: five seeds per probe
# What this run cannot match, whatever its settings: Holmes' own files are not open.
ALWAYS = (
    "datasets are rebuilt from their canonical sources with lingprobe's splits (seeded 70/10/20"
    " over minimal pairs for BLiMP and Zorro; UD EWT's train file for training and its dev file"
    " for testing; SemEval's train and test files), not the splits of Holmes' release files,"
    " which are not openly available: the test items differ from the published ones",
    "published scores are the paper's numbers for each model's own checkpoint and tokenizer;"
    " this run's scores come from the checkpoints given here",
)


@dataclass(frozen=True)
class PublishedComparison:
    """The combined ranking and what it rests on.

    `ranking`: model, mwr, ci_low, ci_high, rank, rank_low, rank_high, n_datasets, this_run (the
    run's models marked), best first. `scores`: the combined long frame (dataset, model, score,
    phenomenon_type, this_run) it was computed from. `shared`: the datasets ranked over.
    `differences`: how the run's protocol differs from the paper's.
    """

    ranking: pl.DataFrame
    scores: pl.DataFrame
    shared: tuple[str, ...]
    differences: tuple[str, ...]


def published_tasks(data: DataSource | str | Path | None = None) -> list[str]:
    """The leaderboard's datasets that lingprobe builds from `data` (sorted)."""
    inventory = set(holmes_datasets()["dataset"])
    return sorted(n for n in available_tasks(data) if n in inventory)


def protocol_differences(config: HolmesConfig) -> tuple[str, ...]:
    """Where a run with `config` departs from the Holmes paper's protocol (as the paper states
    it: mean pooling, the last layer, a linear probe, five seeds, macro-F1 or Pearson on test)."""
    found = list(ALWAYS)
    if config.layers != "last":
        found.append(f"layers={config.layers!r}: Holmes probes the last layer only")
    if config.pool != "mean":
        found.append(f"pool={config.pool!r}: Holmes mean-pools the tokens of a span or text")
    if len(config.grid.seeds) != PAPER_SEEDS:
        found.append(f"{len(config.grid.seeds)} probe seed(s): Holmes averages {PAPER_SEEDS} seeds")
    if config.grid.kind != "linear":
        found.append(f"probe kind {config.grid.kind!r}: Holmes trains linear probes")
    limits = config.limits
    caps = {
        "train": limits.train,
        "dev": limits.dev,
        "test": limits.test,
        "sentences per file": limits.sentences,
        "minimal pairs per paradigm": limits.blimp_pairs,
    }
    capped = [f"{name} <= {value}" for name, value in caps.items() if value is not None]
    if capped:
        found.append(f"items capped ({', '.join(capped)}): Holmes uses whole splits")
    return tuple(found)


def dataset_differences(shared: tuple[str, ...]) -> tuple[str, ...]:
    """Departures from the paper that come with particular datasets of `shared`."""
    uds = [d for d in shared if d.startswith(("protoroles-", "arg-is-", "pred-is-"))]
    if not uds:
        return ()
    return (
        f"{len(uds)} UDS dataset(s) train on the EWT v1.2 dev annotations only (the v1.2 train"
        " file could not be pinned); Holmes trains on the train annotations",
    )


def compare_to_published(
    board: pl.DataFrame,
    published: pl.DataFrame,
    protocol: Sequence[str],
    *,
    ci: float = 0.95,
    n_boot: int = 1000,
    seed: int = 0,
) -> PublishedComparison:
    """Rank the models of `board` (a run's leaderboard) among the models of `published` (the
    published scores, `published_scores`) over the datasets both have; `protocol` lists how the
    run departs from the paper's protocol (`protocol_differences` of its config)."""
    mine = ranked_scores(board).with_columns(
        pl.col("model") + THIS_RUN, this_run=pl.lit(value=True)
    )
    theirs = published.filter(pl.col("fraction") == 1.0).drop_nulls("score")
    shared = sorted(set(mine["dataset"]) & set(theirs["dataset"]))
    if len(shared) < 2:
        raise HolmesRunError(
            f"the run shares {len(shared)} dataset(s) with the published leaderboard"
            f" ({', '.join(shared) or 'none'}); ranking needs two or more: run the tasks of"
            " `published_tasks()` (what --against-published runs by default)"
        )
    columns = ["dataset", "model", "score", "phenomenon_type", "this_run"]
    theirs = theirs.with_columns(this_run=pl.lit(value=False)).select(columns)
    scores = pl.concat([theirs, mine.select(columns)]).filter(pl.col("dataset").is_in(shared))
    ranking = mean_winning_rate(scores.drop("this_run"), ci=ci, n_boot=n_boot, seed=seed)
    ranking = ranking.with_columns(this_run=pl.col("model").str.ends_with(THIS_RUN))
    return PublishedComparison(
        ranking=ranking,
        scores=scores.sort("dataset", "model"),
        shared=tuple(shared),
        differences=tuple(protocol) + dataset_differences(tuple(shared)),
    )


def against_published(
    board: pl.DataFrame,
    config: HolmesConfig,
    data: DataSource | str | Path | None = None,
    *,
    leaderboard_file: str | Path | None = None,
    seed: int = 0,
) -> PublishedComparison:
    """`compare_to_published` against the registry's published leaderboard (or a file of it)."""
    published = published_scores(data, path=leaderboard_file)
    return compare_to_published(board, published, protocol_differences(config), seed=seed)


def render(comparison: PublishedComparison) -> str:
    """The combined leaderboard as Markdown: the run's models in bold, differences below."""
    rank = comparison.ranking
    n_models = rank.height
    lines = [
        "# This run on the published Holmes leaderboard",
        "",
        f"Mean winning rate over the {len(comparison.shared)} datasets this run shares with the"
        f" published leaderboard, {n_models} models; 95% bootstrap intervals over datasets.",
        "",
        "| rank | rank interval | model | mwr | mwr interval | datasets |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rank.iter_rows(named=True):
        name = f"**{row['model']}**" if row["this_run"] else row["model"]
        lines.append(
            f"| {row['rank']:g} | {row['rank_low']:g}-{row['rank_high']:g} | {name} |"
            f" {row['mwr']:.3f} | {row['ci_low']:.3f}-{row['ci_high']:.3f} |"
            f" {row['n_datasets']} |"
        )
    lines += ["", "## Protocol differences (read the ranking with these in mind)", ""]
    lines += [f"- {item}" for item in comparison.differences]
    lines += ["", "## Shared datasets", "", ", ".join(f"`{d}`" for d in comparison.shared)]
    return "\n".join(lines) + "\n"


def write_comparison(comparison: PublishedComparison, folder: str | Path) -> Path:
    """`against_published.parquet` (the ranking) and `against_published.md` into `folder`."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    notes = {
        DIFFERENCES: json.dumps(list(comparison.differences)),
        SHARED: json.dumps(list(comparison.shared)),
    }
    write_table(comparison.ranking, out / TABLE, metadata=notes)
    atomic_write_bytes(out / PAGE, render(comparison).encode("utf-8"))
    return out / PAGE


def read_comparison(path: str | Path) -> PublishedComparison:
    """The ranking a run wrote (`write_comparison`), with its protocol differences and shared
    datasets (no scores: those stay in the run's rows and the published file)."""
    target = Path(path)
    with target.open("rb") as handle:
        notes = pl.read_parquet_metadata(handle)
    with target.open("rb") as handle:
        ranking = pl.read_parquet(handle)
    if DIFFERENCES not in notes or not {"model", "rank", "this_run"} <= set(ranking.columns):
        raise HolmesRunError(
            f"{target} is not a ranking written by lingprobe run holmes --against-published;"
            " rerun that command, or move the file out of the results folder"
        )
    return PublishedComparison(
        ranking=ranking,
        scores=pl.DataFrame(),
        shared=tuple(json.loads(notes.get(SHARED, "[]"))),
        differences=tuple(json.loads(notes[DIFFERENCES])),
    )


def record_comparison(unit: Path, protocol: Sequence[str], leaderboard_file: str | Path) -> None:
    """Note in a Holmes unit folder that its run asked to be ranked against the published
    leaderboard: the protocol differences and the leaderboard file, read by the summary."""
    record = {"protocol": list(protocol), "leaderboard": str(leaderboard_file)}
    atomic_write_bytes(unit / RECORD, json.dumps(record, indent=2).encode("utf-8"))


def recorded_comparisons(units: Sequence[Path]) -> tuple[tuple[str, ...], Path] | None:
    """The protocol differences and leaderboard file the units recorded (`record_comparison`),
    or None where none asked; units that disagree are refused."""
    records = {(u / RECORD).read_text("utf-8") for u in units if (u / RECORD).is_file()}
    if not records:
        return None
    if len(records) > 1:
        raise HolmesRunError(
            "the Holmes units of this folder were run with different protocols or leaderboard"
            " files for --against-published; rank one protocol at a time (one --out per run)"
        )
    record = json.loads(records.pop())
    return tuple(record["protocol"]), Path(record["leaderboard"])


def summary_lines(comparison: PublishedComparison) -> list[str]:
    """The run's models' places, their intervals and the protocol differences, for a terminal."""
    rank = comparison.ranking
    lines = [
        f"against the published Holmes leaderboard ({len(comparison.shared)} shared datasets,"
        f" {rank.height} models):"
    ]
    for row in rank.filter("this_run").iter_rows(named=True):
        lines.append(
            f"  {row['model']}: rank {row['rank']:g} of {rank.height} (95% interval over"
            f" datasets {row['rank_low']:g}-{row['rank_high']:g}), mwr {row['mwr']:.3f}"
            f" [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
        )
    lines.append("protocol differences:")
    lines += [f"  - {item}" for item in comparison.differences]
    return lines
