"""Reading curriculum phenomena: label schemes, splits, errors."""

from __future__ import annotations

import json

import polars as pl
import pytest

from suites.curriculum import (
    THREE_WAY,
    TWO_WAY,
    label_scheme,
    load_phenomena,
    read,
    read_all,
    registry_phenomena,
)
from suites.tasks import TaskError


def _write(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in rows))


def test_read_phenomenon_folder(tmp_path):
    rows = [
        {"premise": "A b.", "hypothesis": "B.", "gold_label": "entailment", "idx": 7},
        {"premise": "C d.", "hypothesis": "D.", "gold_label": "contradiction", "idx": 8},
    ]
    _write(tmp_path / "toy" / "train.jsonl", rows)
    _write(tmp_path / "toy" / "val.jsonl", rows[:1])
    task = read(tmp_path / "toy")
    assert task.phenomenon == "toy" and task.labels == THREE_WAY
    assert task.metadata["label_scheme"] == "3-way"
    assert task.frame["split"].to_list() == ["train", "train", "test"]
    assert task.frame["text_pair"].to_list() == ["B.", "D.", "B."]
    assert task.frame["idx"].to_list() == [7, 8, 7]
    assert task.targets.tolist() == [0, 2, 0]
    assert task.input_type == "sentence pair"
    assert task.items()[1].text_pair == "D."


def test_read_one_file_and_errors(tmp_path):
    rows = [{"premise": "A.", "hypothesis": "B.", "gold_label": "not-entailed"}]
    _write(tmp_path / "two" / "val.jsonl", rows)
    task = read(tmp_path / "two" / "val.jsonl")
    assert task.labels == TWO_WAY and task.frame["split"].to_list() == ["test"]
    _write(tmp_path / "bad" / "train.jsonl", [{"premise": "A.", "gold_label": "neutral"}])
    with pytest.raises(TaskError, match=r"train.jsonl:1.*hypothesis"):
        read(tmp_path / "bad")
    _write(
        tmp_path / "odd" / "train.jsonl", [{"premise": "A.", "hypothesis": "B.", "gold_label": "x"}]
    )
    with pytest.raises(TaskError, match="neither 3-way"):
        read(tmp_path / "odd")
    with pytest.raises(FileNotFoundError, match="choose from"):
        read_all(tmp_path, ["nope"])


def test_label_scheme():
    assert label_scheme(["neutral", "entailment"]) == "3-way"
    assert label_scheme(["entailed"]) == "2-way"
    with pytest.raises(TaskError):
        label_scheme(["entailed", "neutral"])


def test_shipped_phenomena_through_the_registry():
    tasks = load_phenomena(["boolean", "lexical"], "samples")
    boolean, lexical = tasks["boolean"], tasks["lexical"]
    assert boolean.labels == THREE_WAY and lexical.labels == TWO_WAY
    counts = dict(boolean.frame.group_by("split").len().iter_rows())
    assert counts == {"train": 3000, "test": 1000}  # SOURCE.md table
    assert lexical.frame.filter(pl.col("split") == "test").height == 2964
    assert registry_phenomena("samples") == [
        "boolean",
        "lexical",
        "negation",
        "syntactic_alternation",
    ]
    assert len(registry_phenomena()) == 36
    with pytest.raises(TaskError, match="not in 'curriculum-nli' \\(embedded sample\\)"):
        load_phenomena(["counting"], "samples")
