"""The edge and structural suites on the two non-English treebanks that ship with lingprobe (a
French GSD sample, the whole Marathi UFAL treebank), read by registry name with MiniLM standing in
for a multilingual model."""

from __future__ import annotations

import polars as pl
import pytest

from suites.cli import main


@pytest.mark.slow
@pytest.mark.parametrize(
    ("task", "train", "test", "name"),
    [
        ("conllu:upos", "ud-french-gsd:dev", "ud-french-gsd:test", "ud-french-gsd:upos"),
        (
            "conllu:feats:Case",
            "ud-marathi-ufal:train",
            "ud-marathi-ufal:test",
            "ud-marathi-ufal:feats:Case",
        ),
    ],
)
def test_edge_runs_on_a_non_english_treebank(task, train, test, name, tmp_path):
    out = tmp_path / "out"
    args = ["run", "edge", "--models", "minilm", "--task", task]
    args += ["--train-file", train, "--test-file", test]
    args += ["--data", "samples", "--limit-sentences", "60", "--layers", "0,6"]
    args += ["--seeds", "1", "--epochs", "2", "--out", str(out), "--quiet"]
    assert main(args) == 0
    scores = pl.read_parquet(out / "results.parquet")
    assert set(scores["task"]) == {name}
    assert scores["value"].is_finite().all()


@pytest.mark.slow
@pytest.mark.parametrize("bank", ["ud-french-gsd", "ud-marathi-ufal"])
def test_structural_runs_on_a_non_english_treebank(bank, tmp_path):
    train = f"{bank}:dev" if bank == "ud-french-gsd" else f"{bank}:train"
    out = tmp_path / "out"
    args = ["run", "structural", "--models", "minilm"]
    args += ["--train-file", train, "--test-file", f"{bank}:test"]
    args += ["--data", "samples", "--train-sentences", "30", "--dev-sentences", "10"]
    args += ["--test-sentences", "20", "--layers", "0,6", "--epochs", "1"]
    args += ["--out", str(out), "--quiet"]
    assert main(args) == 0
    frame = pl.read_parquet(out / "results.parquet")
    assert set(frame["task"]) == {f"{bank}:distance", f"{bank}:depth"}
    uuas = frame.filter(metric="uuas", split="test")
    assert uuas["value"].is_between(0, 1).all() and uuas.height > 0
