"""Mem-Exact / Mem-Freq / Mem-Uniform on hand-computed fixtures, in both key modes."""

from __future__ import annotations

import polars as pl
import pytest

from suites.edge import classify, filtered_test_sets, heuristics
from suites.tasks import Task, make_frame


def span_task(name, rows, split, kind="classification"):
    """rows: (word, label) -> one item per word, span = the word in 'x WORD y'."""
    frame = make_frame(
        [
            {"text": f"x {w} y", "spans": [(2, 2 + len(w))], "label": y, "split": split}
            for w, y in rows
        ],
        kind,
    )
    return Task(name, frame, kind)


def pair_task(name, rows, split):
    frame = make_frame(
        [
            {
                "text": f"{a} and {b}",
                "spans": [(0, len(a)), (len(a) + 5, len(a) + 5 + len(b))],
                "label": y,
                "split": split,
            }
            for a, b, y in rows
        ],
        "classification",
    )
    return Task(name, frame, "classification")


TRAIN = span_task(
    "train",
    [
        ("cat", "NOUN"),  # single label
        ("bank", "NOUN"),
        ("bank", "NOUN"),
        ("bank", "VERB"),
        ("bank", "VERB"),  # equal counts
        ("run", "VERB"),
        ("run", "VERB"),
        ("run", "VERB"),
        ("run", "NOUN"),  # 3:1
        ("dog", "ADJ"),
    ],
    "train",
)


def marked(test_rows, legacy=False, seed=0):
    test = span_task("test", test_rows, "test")
    return classify(TRAIN, test, seed=seed, legacy_keys=legacy)


def test_unseen_key_is_never_classified():
    row = marked([("zebra", "NOUN")]).row(0, named=True)
    assert (row["mem_exact"], row["mem_freq"], row["mem_uniform"]) == (False, False, False)


def test_single_label_key():
    right = marked([("cat", "NOUN")]).row(0, named=True)
    assert right["mem_exact"] and right["mem_uniform"]
    assert not right["mem_freq"]  # counts over {NOUN, VERB, ADJ} = [1, 0, 0]: skipped
    wrong = marked([("cat", "VERB")]).row(0, named=True)
    assert not (wrong["mem_exact"] or wrong["mem_freq"] or wrong["mem_uniform"])


def test_uniform_counts_are_skipped_by_mem_freq():
    rows = marked([("bank", "NOUN")] * 200)
    assert rows["mem_exact"].all()
    assert not rows["mem_freq"].any()  # counts [2, 2, 0]: two values, one of them zero
    assert 0.4 < rows["mem_uniform"].mean() < 0.6  # NOUN or VERB, uniformly


def test_mem_freq_samples_the_train_distribution():
    rows = marked([("run", "VERB")] * 2000)
    assert rows["mem_exact"].all()
    assert 0.72 < rows["mem_freq"].mean() < 0.78  # counts [1, 3, 0] -> P(VERB) = 3/4
    assert 0.46 < rows["mem_uniform"].mean() < 0.54  # {VERB, NOUN} uniformly


def test_two_distinct_nonzero_counts_are_sampled():
    train = span_task("train", [("a", "X")] * 2 + [("a", "Y")], "train")
    test = span_task("test", [("a", "X")] * 1000, "test")
    rows = classify(train, test, seed=1)
    assert 0.62 < rows["mem_freq"].mean() < 0.71  # counts [2, 1]: P(X) = 2/3


def test_seeded_and_reported_in_percent():
    test = span_task("test", [("run", "VERB")] * 50 + [("zebra", "NOUN")] * 50, "test")
    a = heuristics(TRAIN, test, seed=3)
    assert a.equals(heuristics(TRAIN, test, seed=3))
    exact = a.filter(pl.col("heuristic") == "mem_exact").row(0, named=True)
    assert exact == {"heuristic": "mem_exact", "accuracy": 50.0, "correct": 50, "total": 100}


def test_multilabel_labels_compare_as_sorted_tuples():
    train = span_task("train", [("x", ["b", "a"])], "train", "multilabel")
    test = span_task("test", [("x", ["a", "b"]), ("x", ["a"])], "test", "multilabel")
    rows = classify(train, test)
    assert rows["mem_exact"].to_list() == [True, False]
    assert rows["mem_uniform"].to_list() == [True, False]


def test_legacy_keys_collide_anagrams_in_mem_uniform_only():
    rows = marked([("god", "ADJ")], legacy=True).row(0, named=True)
    assert rows["mem_uniform"]  # frozenset("god") == frozenset("dog")
    assert not rows["mem_exact"] and not rows["mem_freq"]
    assert not marked([("god", "ADJ")]).row(0, named=True)["mem_uniform"]


def test_pair_keys_ordered_by_default_unordered_in_legacy():
    train = pair_task("train", [("cat", "mat", "on")], "train")
    test = pair_task("test", [("mat", "cat", "on")], "test")
    correct = classify(train, test).row(0, named=True)
    legacy = classify(train, test, legacy_keys=True).row(0, named=True)
    assert not (correct["mem_exact"] or correct["mem_uniform"])
    assert legacy["mem_exact"] and legacy["mem_uniform"]


def test_filtered_sets_hold_what_each_heuristic_misses():
    test = span_task("test", [("cat", "NOUN"), ("zebra", "NOUN"), ("cat", "VERB")], "test")
    filtered = filtered_test_sets(TRAIN, test)
    assert filtered["mem_exact"].frame["key"].to_list() == ["zebra", "cat"]
    assert filtered["mem_exact"].frame["label"].to_list() == ["NOUN", "VERB"]
    assert len(filtered["mem_freq"]) == 3
    assert set(filtered) == {"mem_exact", "mem_freq", "mem_uniform"}


@pytest.mark.parametrize("legacy", [False, True])
def test_accuracy_equals_share_of_marked_items(legacy):
    test = span_task("test", [("run", "VERB"), ("bank", "VERB"), ("dog", "ADJ")] * 30, "test")
    table = heuristics(TRAIN, test, legacy_keys=legacy, seed=7)
    rows = classify(TRAIN, test, legacy_keys=legacy, seed=7)
    for name, accuracy in table.select("heuristic", "accuracy").iter_rows():
        assert accuracy == pytest.approx(100 * rows[name].mean())
