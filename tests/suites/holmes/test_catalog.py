"""Holmes-style tasks from the shared data: BLiMP, EWT, SemEval, curriculum NLI; splits, caps."""

from __future__ import annotations

import json

import polars as pl
import pytest

from suites.holmes.blimp import read_blimp
from suites.holmes.catalog import available_tasks, build_task, expand_names
from suites.holmes.inventory import PHENOMENON_TYPES
from suites.holmes.sampling import ensure_dev, limit_items, split_groups
from suites.suite import Limits
from suites.tasks import Task, TaskError, make_frame


def test_blimp_pairs_share_splits_and_carry_inventory_tags(samples):
    path = samples.path("blimp", "adjunct_island")
    task = read_blimp(path, pairs=200, seed=0)
    assert task.name == "blimp-adjunct_island" and len(task) == 400
    assert (task.phenomenon, task.phenomenon_type) == ("island effects", "syntax")
    assert task.labels == ("bad", "good") and task.input_type == "sentence"
    frame = task.frame
    goods, bads = frame[0::2], frame[1::2]
    assert goods["label"].unique().to_list() == ["good"] and bads["label"].unique().to_list() == [
        "bad"
    ]
    assert goods["split"].equals(bads["split"])  # both halves of a minimal pair together
    counts = dict(goods.group_by("split").len().iter_rows())
    assert counts == {"train": 140, "dev": 20, "test": 40}  # 70/10/20 of 200 pairs
    first = json.loads(path.read_text().splitlines()[0])
    whole = read_blimp(path)
    assert whole.frame["text"][:2].to_list() == [first["sentence_good"], first["sentence_bad"]]
    assert read_blimp(path, pairs=200).frame.equals(frame)


@pytest.mark.parametrize(
    ("paradigm", "phenomenon_type", "phenomenon"),
    [  # the Holmes inventory's tags of these paradigms (BLiMP's field and term, renamed)
        ("adjunct_island", "syntax", "island effects"),
        ("anaphor_number_agreement", "morphology", "anaphor agreement"),
        ("causative", "syntax", "argument structure"),
        ("determiner_noun_agreement_1", "morphology", "determiner noun agreement"),
        ("regular_plural_subject_verb_agreement_1", "morphology", "subject-verb agreement"),
        ("npi_present_1", "semantics", "negative polarity item licensing"),
    ],
)
def test_every_shipped_blimp_paradigm_is_typed_as_holmes_types_it(
    samples, paradigm, phenomenon_type, phenomenon
):
    task = read_blimp(samples.path("blimp", paradigm), pairs=5)
    assert (task.phenomenon_type, task.phenomenon) == (phenomenon_type, phenomenon)
    assert task.phenomenon_type in PHENOMENON_TYPES


def test_blimp_errors(tmp_path):
    bad = tmp_path / "broken.jsonl"
    bad.write_text('{"sentence_good": "A b.", "sentence_bad": "B a."}\n{"sentence_good": "x"\n')
    with pytest.raises(TaskError, match=r"broken.jsonl:2: not valid JSON"):
        read_blimp(bad)
    bad.write_text('{"sentence_good": "A b.", "sentence_bad": ""}\n')
    with pytest.raises(TaskError, match=r"broken.jsonl:1: \['sentence_bad'\] missing or empty"):
        read_blimp(bad)
    with pytest.raises(FileNotFoundError):
        read_blimp(tmp_path / "nope.jsonl")


def test_catalog_names_and_groups():
    names = available_tasks("samples")
    assert len([n for n in names if n.startswith("blimp-")]) == 6
    assert len([n for n in available_tasks("full") if n.startswith("blimp-")]) == 67
    assert len([n for n in available_tasks() if n.startswith("curriculum-")]) == 36
    assert {"upos", "xpos", "dep", "relation-classification"} <= set(names)
    assert expand_names(["ewt", "upos", "blimp-causative"], "samples") == [
        "upos",
        "xpos",
        "dep",
        "blimp-causative",
    ]
    with pytest.raises(TaskError, match="unknown Holmes task 'pos-tags'"):
        build_task("pos-tags", "samples")
    with pytest.raises(TaskError, match="did you mean blimp-adjunct_island"):
        build_task("blimp-adjunct_islnd", "samples")


LIMITS = Limits(train=300, dev=60, test=100)


@pytest.mark.parametrize(
    ("name", "input_type", "phenomenon", "kind"),
    [
        ("upos", "span", "part-of-speech", "syntax"),
        ("dep", "span pair", "dependency parsing", "syntax"),
        ("relation-classification", "span pair", "relation classification", "semantics"),
    ],
)
def test_ewt_and_semeval_tasks(name, input_type, phenomenon, kind):
    task = build_task(name, "samples", limits=LIMITS)
    assert (task.name, task.input_type) == (name, input_type)
    assert (task.phenomenon, task.phenomenon_type) == (phenomenon, kind)
    counts = dict(task.frame.group_by("split").len().iter_rows())
    assert counts == {"train": 300, "dev": 60, "test": 100}
    train_texts = set(task.split("train")["text"])
    assert not train_texts & set(task.split("dev")["text"])  # dev carved by sentence
    if name != "relation-classification":
        assert not train_texts & set(task.split("test")["text"])  # EWT dev file = test


def test_curriculum_task():
    task = build_task("curriculum-negation", "samples", limits=LIMITS)
    assert task.name == "curriculum-negation" and task.input_type == "sentence pair"
    assert task.phenomenon_type in PHENOMENON_TYPES
    assert dict(task.frame.group_by("split").len().iter_rows()) == {
        "train": 300,
        "dev": 60,
        "test": 100,
    }


def _words(n_sentences: int, words: int) -> Task:
    rows = [
        {
            "text": f"s{i} " + " ".join(f"w{j}" for j in range(words)),
            "spans": [[0, 2]],
            "label": str(i % 2),
            "split": "train",
        }
        for i in range(n_sentences)
        for _ in range(words)
    ]
    return Task("words", make_frame(rows, "classification"))


def test_limit_items_keeps_whole_sentences_until_the_cap():
    task = _words(20, 5)
    capped = limit_items(task, {"train": 12}, seed=0)
    per_text = capped.frame.group_by("text").len()["len"].sort().to_list()
    assert capped.frame.height == 12 and per_text == [2, 5, 5]  # two whole, one cut
    assert limit_items(task, {"train": 12}, seed=0).frame.equals(capped.frame)
    assert limit_items(task, {"train": None}).frame.equals(task.frame)


def test_split_groups_and_ensure_dev():
    task = _words(30, 3)
    groups = task.frame["text"].to_list()
    split = split_groups(task, groups, (0.7, 0.1, 0.2), seed=0)
    per_text = split.frame.group_by("text").agg(pl.col("split").n_unique())
    assert per_text["split"].max() == 1
    assert dict(split.frame.group_by("split").len().iter_rows()) == {
        "train": 63,
        "dev": 9,
        "test": 18,
    }
    carved = ensure_dev(task.with_frame(task.frame), 0.1, seed=0)
    assert dict(carved.frame.group_by("split").len().iter_rows()) == {"train": 81, "dev": 9}
    assert ensure_dev(carved).frame.equals(carved.frame)
    with pytest.raises(TaskError, match="must be >= 0 and sum to 1"):
        split_groups(task, groups, (0.5, 0.1, 0.1))
