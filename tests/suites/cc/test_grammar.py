"""The CC grammar and generator: skeletons, disjoint vocabularies, features, determinism."""

from __future__ import annotations

import re

import numpy as np
import pytest

from suites.cc import generate, load_syntax_vocabulary, render, shape_table
from suites.cc.errors import VocabularyError
from suites.cc.grammar import COMPONENTS, INSERT1, CoreWords, Draw, draw

OPEN_SLOTS = ("ADV", "NUM", "NOUN", "VERB", "PRON", "CITY", "TEMP2", "UNDER2")


def _alt(words: tuple[str, ...]) -> str:
    return "(?:" + "|".join(re.escape(w) for w in words) + ")"


def _skeletons(split: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    v = load_syntax_vocabulary(split)
    adv, num, noun, verb = (_alt(v.words(s)) for s in ("ADV", "NUM", "NOUN", "VERB"))
    adv_i = f"{adv}(?: and {adv})?"
    positive = re.compile(rf"\b[Tt]he {adv_i} the {num} {noun} {verb}\b")
    negative = re.compile(rf"\b[Tt]he {adv_i} {num} {verb} the {noun}\b")
    return positive, negative


@pytest.mark.parametrize("split", ["train", "test"])
def test_every_sentence_holds_its_skeleton_twice(split):
    frame = generate(300, split, seed=1)
    positive, negative = _skeletons(split)
    for sentence, label in frame.select("sentence", "label").iter_rows():
        plain = re.sub(r"[,;.](?=\s|$)", "", sentence)
        hits = (len(positive.findall(plain)), len(negative.findall(plain)))
        assert hits == ((2, 0) if label == 1 else (0, 2)), sentence
    assert frame["label"].to_list() == [1, 0] * 300


def test_a_pair_shares_its_words_in_another_order():
    frame = generate(100, "train", seed=2)
    for pos, neg in zip(frame["sentence"][0::2], frame["sentence"][1::2], strict=True):
        assert pos != neg
        assert sorted(pos.replace(",", " ").split()) != [] and sorted(
            re.findall(r"[\w-]+", pos)
        ) == sorted(re.findall(r"[\w-]+", neg))


def test_train_and_test_open_vocabularies_are_disjoint():
    train, test = load_syntax_vocabulary("train"), load_syntax_vocabulary("test")
    for slot in OPEN_SLOTS:
        shared = set(train.words(slot)) & set(test.words(slot))
        assert not shared, f"{slot} shares {shared}"
    test_words = {w for s in ("ADV", "NUM", "NOUN", "VERB", "UNDER2") for w in test.words(s)}
    seen = {w for s in generate(500, "train")["sentence"] for w in re.findall(r"[\w-]+", s)}
    # the fixed phrase "without a break" (INSERT1, both splits) holds the test verb "break"
    assert seen & test_words <= set(" ".join(INSERT1).split())
    assert "break" in test_words


def test_features_of_a_hand_built_sentence():
    filled = Draw(
        shape=(0, 0, 0, 0, 0, 0),
        start=("Nowadays", ","),
        core1=CoreWords(("harder",), "two", "cats", "fight"),
        add1=("under", "the", "bridge"),
        insert=("without", "a", "pause"),
        punct=";",
        core2=CoreWords(("faster", "and", "higher"), "three", "dogs", "shake"),
        add2=(),
    )
    pos, neg = render(filled, True), render(filled, False)
    assert pos.text == (
        "Nowadays, the harder the two cats fight under the bridge without a pause;"
        " the faster and higher the three dogs shake."
    )
    assert neg.text == (
        "Nowadays, the harder two fight the cats under the bridge without a pause;"
        " the faster and higher three shake the dogs."
    )
    for s in (pos, neg):
        assert (s.length, s.cc_start, s.second_start, s.distance) == (21, 1, 13, 6)
    assert (pos.label, neg.label) == (1, 0)


def test_features_of_the_shortest_sentence():
    filled = Draw(
        (0,) * 6,
        (),
        CoreWords(("later",), "twenty-one", "men", "slam"),
        (),
        (),
        "",
        CoreWords(("wider",), "six", "mice", "choke"),
        ("during", "the", "evening"),
    )
    s = render(filled, True)
    assert s.text == (
        "The later the twenty-one men slam the wider the six mice choke during the evening."
    )
    assert (s.length, s.cc_start, s.second_start, s.distance) == (15, 0, 6, 0)


@pytest.mark.parametrize("split", ["train", "test"])
def test_features_match_an_independent_count(split):
    adverbs = set(load_syntax_vocabulary(split).words("ADV"))
    frame = generate(300, split, seed=4)
    for row in frame.iter_rows(named=True):
        words = [
            w for w in row["sentence"].replace(",", " ").replace(";", " ").replace(".", " ").split()
        ]
        opens = [
            i
            for i in range(len(words) - 1)
            if words[i].lower() == "the" and words[i + 1] in adverbs
        ]
        assert len(opens) == 2
        core = 8 if words[opens[0] + 2] == "and" else 6
        assert row["length"] == len(words)
        assert row["cc_start"] == opens[0]
        assert row["second_start"] == opens[1]
        assert row["distance"] == opens[1] - opens[0] - core


def test_shape_table_agrees_with_rendering_and_sums_to_one():
    vocabulary = load_syntax_vocabulary("test")
    table = shape_table(vocabulary)
    assert table.probability.sum() == pytest.approx(1.0)
    insert_axis = list(COMPONENTS).index("insert")
    no_insert = table.probability.reshape(table.dims).take(0, axis=insert_axis).sum()
    assert no_insert == pytest.approx(0.5)  # SPOS -> POS1 PUNCT POS2 '.' | ... INSERT ...
    rng = np.random.default_rng(0)
    for shape in table.sample(rng, 200):
        flat = np.ravel_multi_index(shape, table.dims)
        s = render(draw(shape, vocabulary, rng), bool(rng.integers(2)))
        got = (s.length, s.cc_start, s.second_start, s.distance)
        want = tuple(
            int(table.features[f][flat]) for f in ("length", "cc_start", "second_start", "distance")
        )
        assert got == want, s.text


def test_same_seed_same_data_other_seed_other_data():
    assert generate(50, "train", seed=3).equals(generate(50, "train", seed=3))
    assert not generate(50, "train", seed=3).equals(generate(50, "train", seed=4))
    assert generate(5, "test").columns == [
        "sentence",
        "label",
        "length",
        "cc_start",
        "second_start",
        "distance",
        "pair",
    ]


def test_bad_vocabulary_files_are_named(tmp_path):
    path = tmp_path / "v.json"
    path.write_text('{"train": {"ADV": ["a"]}}')
    with pytest.raises(VocabularyError, match="lacks slots"):
        load_syntax_vocabulary("train", path)
    full = {
        s: ["x"] for s in ("ADV", "NUM", "NOUN", "VERB", "PRON", "UNDER2", "CANWORD", "KNOWNWORD")
    }
    full["TEMP2"] = ["the day", "noon"]
    path.write_text('{"train": ' + str(full).replace("'", '"') + "}")
    with pytest.raises(VocabularyError, match="TEMP2 mixes word counts"):
        load_syntax_vocabulary("train", path)
    with pytest.raises(VocabularyError, match="split="):
        load_syntax_vocabulary("dev")
