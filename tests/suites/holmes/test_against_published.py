"""A run's models ranked among the published Holmes models: shared datasets, mean winning rate
checked by hand, the bootstrap rank interval, the protocol differences, and the CLI on MiniLM."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from probes import ProbeGrid
from suites.cli import main
from suites.datasets import DataSource
from suites.holmes.against_published import (
    ALWAYS,
    THIS_RUN,
    compare_to_published,
    dataset_differences,
    protocol_differences,
    published_tasks,
    render,
)
from suites.holmes.catalog import available_tasks, expand_names
from suites.holmes.published import read_leaderboard
from suites.holmes.run import HolmesConfig, HolmesRunError
from suites.suite import Limits
from tests.suites.holmes.leaderboards import MODELS, run_board, write_leaderboards


@pytest.fixture
def published(tmp_path):
    holmes, _ = write_leaderboards(tmp_path)
    return read_leaderboard(holmes)


def test_the_run_is_ranked_by_mean_winning_rate_over_shared_datasets(published):
    rng = np.random.default_rng(1)
    shared = [f"ds-{d:02d}" for d in range(0, 20, 2)]  # ds-07 lacks one published score
    mine = {d: float(rng.uniform(0.5, 0.95)) for d in [*shared, "ds-07", "not-on-the-board"]}
    comparison = compare_to_published(
        run_board(mine), published, protocol_differences(HolmesConfig()), n_boot=200
    )
    assert comparison.shared == tuple(sorted([*shared, "ds-07"]))
    ranking = comparison.ranking
    assert ranking.height == len(MODELS) + 1
    me = ranking.filter("this_run").row(0, named=True)
    assert me["model"] == "mine" + THIS_RUN and me["n_datasets"] == 11
    # by hand: on each shared dataset, the share of the other scored models the run beats
    rates = []
    for dataset in comparison.shared:
        others = published.filter(pl.col("dataset") == dataset).drop_nulls("score")["score"]
        beaten = sum(float(s) < mine[dataset] for s in others)
        ties = sum(float(s) == mine[dataset] for s in others)
        rates.append((beaten + ties / 2) / len(others))
    assert me["mwr"] == pytest.approx(np.mean(rates))
    better = (ranking.filter(~pl.col("this_run"))["mwr"] > me["mwr"]).sum()
    assert me["rank"] == better + 1
    assert me["rank_low"] <= me["rank"] <= me["rank_high"]
    assert me["ci_low"] <= me["mwr"] <= me["ci_high"]
    page = render(comparison)
    assert f"**mine{THIS_RUN}**" in page and ALWAYS[0] in page


def test_a_published_model_run_again_appears_twice(published):
    board = run_board({f"ds-{d:02d}": 0.5 for d in range(5)}, model=MODELS[0])
    ranking = compare_to_published(
        board, published, protocol_differences(HolmesConfig()), n_boot=50
    ).ranking
    assert {MODELS[0], MODELS[0] + THIS_RUN} <= set(ranking["model"])


def test_fewer_than_two_shared_datasets_are_refused(published):
    with pytest.raises(HolmesRunError, match="shares 1 dataset"):
        compare_to_published(
            run_board({"ds-00": 0.5, "x": 0.1}), published, protocol_differences(HolmesConfig())
        )


def test_protocol_differences_name_each_departure_from_the_paper():
    assert protocol_differences(HolmesConfig()) == ALWAYS
    config = replace(
        HolmesConfig(grid=ProbeGrid(seeds=(0,))),
        layers="all",
        limits=Limits(train=40, blimp_pairs=20),
    )
    found = "\n".join(protocol_differences(config))
    assert "layers='all'" in found and "1 probe seed(s)" in found
    assert "train <= 40" in found and "minimal pairs per paradigm <= 20" in found


def test_uds_datasets_bring_their_own_difference():
    assert dataset_differences(("upos", "blimp-causative")) == ()
    (line,) = dataset_differences(("upos", "protoroles-volition", "arg-is-kind"))
    assert line.startswith("2 UDS dataset(s)")


def test_published_tasks_are_the_built_datasets_the_leaderboard_has():
    samples = DataSource(samples=True)
    names = published_tasks(samples)
    assert {"upos", "xpos", "dep", "blimp-causative", "zorro-case-subjective_pronoun"} <= set(names)
    assert not any(n.startswith(("ud-", "curriculum-")) for n in names)
    assert set(names) <= set(available_tasks(samples))
    assert len(published_tasks()) >= 110


def write_published(path, datasets, seed=0):
    """A leaderboard in the published format over `datasets` (the real one is not shipped)."""
    rng = np.random.default_rng(seed)
    header = ["", "probing dataset", "linguistic subfield", "linguistic phenomena"]
    header += ["probe type", "train portion", "probe", "org/a", "org/b", "org/c"]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for i, name in enumerate(datasets):
            meta = [str(i), name, "syntax", "p", "sentence classification", "1", name]
            writer.writerow(meta + [f"{v:.4f}" for v in rng.uniform(0.3, 0.9, 3)])
    return path


@pytest.mark.slow
def test_cli_ranks_minilm_against_a_published_leaderboard(tmp_path, capsys):
    tasks = ["blimp-causative", "zorro-case-subjective_pronoun", "upos"]
    leaderboard = write_published(tmp_path / "holmes.csv", [*tasks, "coref"])
    out = tmp_path / "run"
    argv = [
        "run",
        "holmes",
        "--models",
        "minilm",
        "--against-published",
        "--tasks",
        ",".join(tasks),
    ]
    argv += ["--leaderboard", str(leaderboard), "--data", "samples", "--limit-blimp-pairs", "40"]
    argv += ["--limit-train", "80", "--limit-dev", "20", "--limit-test", "40", "--seeds", "1"]
    argv += ["--epochs", "2", "--no-mdl", "--quiet", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "against the published Holmes leaderboard (3 shared datasets, 4 models)" in printed
    minilm = f"minilm{THIS_RUN}"  # the model as given to --models
    assert f"{minilm}: rank" in printed and "protocol differences:" in printed
    assert "1 probe seed(s)" in printed and "items capped" in printed
    ranking = pl.read_parquet(out / "holmes" / "against_published.parquet")
    assert set(ranking["model"]) == {"org/a", "org/b", "org/c", minilm}
    assert ranking.filter("this_run")["n_datasets"].to_list() == [3]
    assert f"**{minilm}**" in (out / "holmes" / "against_published.md").read_text("utf-8")


def test_against_published_without_tasks_runs_the_published_group():
    from suites.holmes.suite import HolmesSuite

    values = HolmesSuite().table_values({"against_published": True}, Path.cwd())
    assert [g.tasks for g in values["groups"]] == [("published",)]
    samples = DataSource(samples=True)
    assert sorted(expand_names(["published"], samples)) == published_tasks(samples)
