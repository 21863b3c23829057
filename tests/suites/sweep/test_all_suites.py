"""One sweep over every registered suite, each with `layers` and the one `[probe]` table: plan,
run on both executors, one leaderboard."""

from __future__ import annotations

import polars as pl
import pytest

from suites.cli import main
from suites.registry import SUITES
from suites.schema import RESULTS_SCHEMA, SCORE_SCHEMA
from suites.sweep import load_config, plan_units, run_sweep

CONFIG = """
[sweep]
out = "{out}"
executor = "{executor}"
data = "samples"

[[models]]
name = "minilm"
init = ["pretrained", "random"]

[[suites]]
suite = "holmes"
tasks = ["blimp-causative"]
layers = "last"
limits = {{blimp_pairs = 30}}
probe = {{mdl = false, epochs = 2, lr = 0.01}}

[[suites]]
suite = "edge"
task = "conllu:upos"
probe = {{epochs = 2, lr = 0.01}}
train_file = "ud-english-ewt:train"
test_file = "ud-english-ewt:dev"
layers = "last"
limits = {{sentences = 20}}

[[suites]]
suite = "curriculum"
phenomena = ["boolean"]
probe = {{epochs = 2, lr = 0.01}}
sizes = [10]
analyses = ["inoculation"]
layers = "last"
limits = {{train = 120, test = 60}}

[[suites]]
suite = "cc"
features = ["length"]
n_per_class = 6
layers = "last"

[[suites]]
suite = "structural"
layers = "last"
train_sentences = 20
dev_sentences = 10
test_sentences = 20
probe = {{epochs = 2}}

[probe]
seeds = 1
"""


def write(folder, executor="local"):
    path = folder / f"{executor}.toml"
    path.write_text(CONFIG.format(out=folder / executor, executor=executor))
    return path


def test_dry_run_lists_units_of_every_suite(tmp_path, capsys):
    path = write(tmp_path)
    units = plan_units(load_config(path))
    suites = {"edge", "holmes", "curriculum", "cc", "structural"}
    assert {u.suite for u in units} == set(SUITES) == suites
    assert len(units) == 2 * 5  # two models (MiniLM and its twin) x one unit per suite entry
    assert main(["sweep", str(path), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "10 units: 0 done, 0 failed, 10 to run" in printed
    names = ("blimp-causative", "ud-english-ewt:upos", "boolean", "cc:length")
    for name in (*names, "ud-english-ewt:structural"):
        assert name in printed


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("all-suites")
    return folder, run_sweep(write(folder), progress=False)


@pytest.mark.slow
def test_every_suite_in_one_leaderboard(local_run):
    folder, summary = local_run
    assert (summary.planned, summary.done, summary.failed) == (10, 10, 0)
    rows = pl.read_parquet(folder / "local" / "results.parquet")
    board = pl.read_parquet(folder / "local" / "leaderboard.parquet")
    assert rows.columns == list(RESULTS_SCHEMA) and board.columns == list(SCORE_SCHEMA)
    assert set(board["suite"]) == set(SUITES)
    assert set(board["model"]) == {"minilm", "minilm@random", "right_branching"}
    assert set(board.filter(model="right_branching")["suite"]) == {"structural"}
    tasks = set(board["task"])
    assert {"blimp-causative", "ud-english-ewt:upos", "curriculum-boolean", "cc:length"} <= tasks
    assert {"ud-english-ewt:distance", "ud-english-ewt:depth"} <= tasks
    uuas = board.filter(metric="uuas", split="test")
    assert uuas["score"].is_between(0, 1).all() and uuas.height == 3
    assert main(["report", str(folder / "local"), "--html"]) == 0
    page = (folder / "local" / "report.html").read_text(encoding="utf-8")
    for task in ("blimp-causative", "ud-english-ewt:upos", "cc:length", "ud-english-ewt:distance"):
        assert f"{task}: test" in page  # a layer-curve title per task
    assert "right_branching (baseline)" in page  # drawn as a line, not ranked as a model
    scores = page.split("id='lingprobe-scores'>")[1].split("</script>")[0]
    assert "right_branching" not in scores
    test = board.filter((pl.col("split") == "test") & pl.col("metric").is_in(["accuracy"]))
    assert test["score"].is_between(0, 1).all()


@pytest.mark.slow
def test_the_ray_executor_gives_the_same_leaderboard(ray_instance, local_run, tmp_path):
    summary = run_sweep(write(tmp_path, "ray"), progress=False)
    assert (summary.done, summary.failed) == (10, 0)
    assert summary.leaderboard.drop("unit").equals(local_run[1].leaderboard.drop("unit"))
