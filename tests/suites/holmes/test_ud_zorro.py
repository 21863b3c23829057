"""Holmes-style tasks from Zorro and from any UD treebank; the Holmes coverage table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from suites.datasets import get_dataset
from suites.holmes.catalog import available_tasks, build_task, expand_names
from suites.holmes.coverage import PAGE, coverage, main, render
from suites.holmes.inventory import holmes_datasets
from suites.holmes.ud import split_keys
from suites.holmes.zorro import read_zorro
from suites.suite import Limits
from suites.tasks import TaskError

ROOT = Path(__file__).resolve().parents[3]


def test_zorro_pairs_follow_the_readme_line_order_and_share_splits(samples):
    path = samples.path("zorro", "case-subjective_pronoun")
    lines = path.read_text("utf-8").splitlines()
    task = read_zorro(path)
    assert task.name == "zorro-case-subjective_pronoun" and len(task) == len(lines) == 4000
    goods, bads = task.frame[0::2], task.frame[1::2]
    # README: odd-numbered lines (1, 3, ...) ungrammatical, the even-numbered line after it good
    assert goods["text"].to_list()[:2] == [lines[1], lines[3]]
    assert bads["text"].to_list()[:2] == [lines[0], lines[2]]
    assert set(goods["label"]) == {"good"} and set(bads["label"]) == {"bad"}
    assert goods["split"].equals(bads["split"])
    counts = dict(goods.group_by("split").len().iter_rows())
    assert counts == {"train": 1400, "dev": 200, "test": 400}  # 70/10/20 of 2,000 pairs
    capped = read_zorro(path, pairs=50, seed=3)
    assert len(capped) == 100 and capped.frame.equals(read_zorro(path, pairs=50, seed=3).frame)


def test_zorro_tags_are_the_holmes_inventorys():
    inventory = holmes_datasets().filter(pl.col("dataset").str.starts_with("zorro-"))
    assert inventory.height == 21 == len(get_dataset("zorro").files) - 1  # + its licence
    built = {n for n in available_tasks() if n.startswith("zorro-")}
    assert built == set(inventory["dataset"])
    from suites.holmes.zorro import holmes_tags

    for row in inventory.iter_rows(named=True):
        expected = (row["phenomenon_type"], row["phenomenon"], row["probe_type"])
        assert holmes_tags(row["dataset"].removeprefix("zorro-")) == expected


def test_an_odd_zorro_file_is_refused(tmp_path):
    path = tmp_path / "binding-x.txt"
    path.write_text("a b .\nb a .\nc .\n", encoding="utf-8")
    with pytest.raises(TaskError, match="even number of lines"):
        read_zorro(path)


def test_ud_names_listed_grouped_and_built_with_holmes_tags(samples):
    names = available_tasks(samples)
    assert {"ud-french-gsd:upos", "ud-marathi-ufal:deprel", "zorro-case-subjective_pronoun"} <= set(
        names
    )
    assert "ud-german-gsd:upos" not in names  # with samples: only the shipped treebanks
    assert "ud-german-gsd:upos" in available_tasks()  # the registry's
    assert expand_names(["ud-french-gsd"], samples) == [
        "ud-french-gsd:upos",
        "ud-french-gsd:xpos",
        "ud-french-gsd:deprel",
    ]
    upos = build_task("ud-french-gsd:upos", samples, limits=Limits(sentences=50))
    assert (upos.phenomenon_type, upos.phenomenon) == ("syntax", "part-of-speech")
    assert upos.metadata["probe_type"] == "token(s) classification"
    assert upos.metadata["files"] == ("dev", "test")  # no train file registered: dev trains
    case = build_task("ud-marathi-ufal:feats:Case", samples)
    assert case.name == "ud-marathi-ufal:feats:Case" and case.phenomenon_type == "morphology"
    assert case.metadata["files"] == ("train", "test")


def test_feats_labels_are_the_feature_values_of_the_words_that_carry_it(samples):
    path = samples.path("ud-marathi-ufal", "test")
    expected = []
    for line in path.read_text("utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            feats = dict(f.split("=", 1) for f in cols[5].split("|") if "=" in f)
            if "Case" in feats:
                expected.append(feats["Case"])
    task = build_task("ud-marathi-ufal:feats:Case", samples)
    assert task.split("test")["label"].to_list() == expected


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("ud-marathi-ufal:xpos", "leaves XPOS unannotated"),
        ("ud-marathi-ufal:feats:", "names one UD feature"),
        ("ud-marathi-ufal:feats:Kase", "no word has the feature 'Kase'"),
        ("ud-klingon-x:upos", "unknown Holmes task"),
    ],
)
def test_ud_names_that_cannot_be_built_say_why(samples, name, message):
    with pytest.raises(TaskError, match=message):
        build_task(name, samples)


def test_split_keys():
    assert split_keys(["train", "dev", "test", "licence"]) == ("train", "test")
    assert split_keys(["dev", "test"]) == ("dev", "test")
    assert split_keys(["train", "dev"]) == ("train", "dev")
    with pytest.raises(TaskError, match="two of train/dev/test"):
        split_keys(["test", "licence"])


def test_the_coverage_page_is_current_and_every_unbuilt_dataset_has_a_reason(tmp_path):
    frame = coverage()
    assert frame.height == 208 and frame["dataset"].n_unique() == 208
    built = frame.filter("built")
    assert built.height >= 110 and (built["source"] != "").all()
    assert set(built["dataset"]) == set(available_tasks()) & set(frame["dataset"])
    assert (frame.filter(~pl.col("built"))["reason"].str.len_chars() > 20).all()
    # the script as a user runs it, checking the committed page
    done = subprocess.run(
        [sys.executable, "-m", "suites.holmes.coverage", "--check", str(PAGE)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    out = tmp_path / "coverage.md"
    assert main([str(out)]) == 0
    assert out.read_text("utf-8") == render(frame) == (ROOT / PAGE).read_text("utf-8")
    assert f"**{built.height} of 208 built.**" in render(frame)
    out.write_text("stale", encoding="utf-8")
    assert main(["--check", str(out)]) == 1
