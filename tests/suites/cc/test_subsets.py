"""Feature-controlled subsets D_f: balanced at every value, train in the lowest quartile."""

from __future__ import annotations

import polars as pl
import pytest

from suites.cc import (
    FEATURES,
    feature_ranges,
    feature_subsets,
    load_syntax_vocabulary,
    lowest_quartile,
)


def test_lowest_quartile_by_hand():
    assert lowest_quartile([0, 1, 3, 4, 5, 9, 10, 11]) == [0, 1]  # 0 + 11/4 = 2.75
    assert lowest_quartile([12, 13, 20, 22, 23, 56]) == [12, 13, 20, 22, 23]  # 12 + 44/4 = 23
    assert lowest_quartile([5, 6, 7], v_min=0, v_max=20) == [5]


def test_ranges_of_the_shipped_grammar():
    ranges = feature_ranges()
    assert ranges["cc_start"] == ([0, 1], [0, 1, 3, 4, 5, 9, 10, 11])
    train, test = ranges["length"]
    assert (test[0], test[-1]) == (12, 56) and train == list(range(12, 24))
    assert ranges["distance"][0] == [0, 1, 2, 3, 4, 5] and ranges["distance"][1][-1] == 23


@pytest.fixture(scope="module")
def subsets():
    return feature_subsets(FEATURES, n_per_value=6, seed=0)


@pytest.mark.parametrize("feature", FEATURES)
def test_balanced_at_every_value(subsets, feature):
    frame = subsets[feature]
    assert (frame["value"] == frame[feature]).all()
    cells = frame.group_by("split", "value", "label").len()
    assert cells["len"].to_list() == [6] * cells.height
    for split in ("train", "test"):
        part = cells.filter(pl.col("split") == split)
        assert sorted(part.filter(pl.col("label") == 1)["value"].to_list()) == sorted(
            part.filter(pl.col("label") == 0)["value"].to_list()
        )


@pytest.mark.parametrize("feature", FEATURES)
def test_train_confined_to_lowest_quartile_test_full_range(subsets, feature):
    frame = subsets[feature]
    train_values, test_values = feature_ranges()[feature]
    low, high = min(test_values), max(test_values)
    got_train = sorted(frame.filter(pl.col("split") == "train")["value"].unique().to_list())
    got_test = sorted(frame.filter(pl.col("split") == "test")["value"].unique().to_list())
    assert got_train == train_values
    assert max(got_train) <= low + (high - low) / 4
    assert got_test == test_values
    assert len(got_test) > len(got_train)


def test_each_split_uses_its_vocabulary(subsets):
    frame = subsets["length"]
    for split in ("train", "test"):
        adverbs = set(load_syntax_vocabulary(split).words("ADV"))
        for sentence in frame.filter(pl.col("split") == split)["sentence"].head(50):
            words = set(sentence.replace(",", " ").replace(";", " ").replace(".", " ").split())
            assert words & adverbs, sentence


def test_subsets_are_seeded_and_reject_unknown_features():
    a = feature_subsets(("cc_start",), 3, seed=5)["cc_start"]
    assert a.equals(feature_subsets(("cc_start",), 3, seed=5)["cc_start"])
    assert not a.equals(feature_subsets(("cc_start",), 3, seed=6)["cc_start"])
    with pytest.raises(ValueError, match="unknown features"):
        feature_subsets(("width",), 3)
