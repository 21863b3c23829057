"""Schemata S1-S7 exactly as specified, and the instance sampler."""

from __future__ import annotations

import pytest

from suites.cc import (
    AdjectivePair,
    SemanticInstance,
    calibration_sentence,
    load_adjective_pairs,
    load_names,
    sample_instances,
    schema_sentence,
    semantic_sentences,
)
from suites.cc.errors import VocabularyError

INSTANCE = SemanticInstance(
    adj1="stronger",
    ant1="weaker",
    adj2="faster",
    ant2="slower",
    name1="Terry",
    name2="John",
    calibration_names=(
        ("Anna", "Mark"),
        ("Lisa", "Tom"),
        ("Kate", "Paul"),
        ("Emma", "Jack"),
        ("Mary", "Frank"),
    ),
    calibration_adjectives=("taller", "louder", "older", "richer", "warmer"),
)
RULES = "The stronger you are, the faster you are. The weaker you are, the slower you are."


def test_test_schemata_exactly():
    assert schema_sentence("S1", INSTANCE) == (
        f"{RULES} Terry is stronger than John. Therefore, Terry is [MASK] than John."
    )
    assert schema_sentence("S2", INSTANCE) == (
        "The weaker you are, the slower you are. The stronger you are, the faster you are."
        " Terry is stronger than John. Therefore, Terry is [MASK] than John."
    )
    assert schema_sentence("S3", INSTANCE) == (
        "The stronger you are, the slower you are. The weaker you are, the faster you are."
        " Terry is stronger than John. Therefore, Terry is [MASK] than John."
    )
    assert schema_sentence("S4", INSTANCE) == (
        f"{RULES} John is stronger than Terry. Therefore, John is [MASK] than Terry."
    )


def test_calibration_schemata_exactly():
    assert calibration_sentence("S5", "S1", INSTANCE, 0) == (
        "Anna is stronger than Mark. Therefore, Anna is [MASK] than Mark."
    )
    assert calibration_sentence("S6", "S1", INSTANCE, 1) == (
        f"{RULES} Terry is stronger than John. Therefore, Lisa is [MASK] than Tom."
    )
    assert calibration_sentence("S7", "S1", INSTANCE, 4) == (
        f"{RULES} Terry is warmer than John. Therefore, Terry is [MASK] than John."
    )
    assert calibration_sentence("S7", "S2", INSTANCE, 0).startswith(
        "The weaker you are, the slower you are. The stronger you are, the faster you are."
        " Terry is taller than John."
    )
    with pytest.raises(ValueError, match="no calibration contexts"):
        calibration_sentence("S5", "S4", INSTANCE, 0)


def test_sentence_table_layout():
    frame = semantic_sentences([INSTANCE, INSTANCE])
    assert frame.height == 2 * (4 + 3 * 3 * 5)
    tests = frame.filter(frame["context"] == 0)
    assert tests["schema"].to_list() == ["S1", "S2", "S3", "S4"] * 2
    assert tests["correct"].to_list() == ["adj2", "adj2", "ant2", "adj2"] * 2
    s3_contexts = frame.filter((frame["base"] == "S3") & (frame["context"] > 0))
    assert set(s3_contexts["correct"]) == {"ant2"} and s3_contexts.height == 2 * 15


def test_sampled_instances_are_distinct_and_seeded():
    pairs, names = load_adjective_pairs(), load_names()
    assert len(pairs) >= 20 and len(names) == 33
    instances = sample_instances(pairs, names, 200, seed=1)
    assert instances == sample_instances(pairs, names, 200, seed=1)
    assert len({(i.adj1, i.adj2, i.name1, i.name2) for i in instances}) == 200
    pair_of = {w: k for k, p in enumerate(pairs) for w in (p.comparative, p.antonym)}
    for i in instances:
        assert pair_of[i.adj1] == pair_of[i.ant1] != pair_of[i.adj2] == pair_of[i.ant2]
        assert i.name1 != i.name2 and len(set(i.calibration_names)) == 5
        assert not {n for p in i.calibration_names for n in p} & {i.name1, i.name2}
        assert not set(i.calibration_adjectives) & {i.adj1, i.ant1, i.adj2, i.ant2}
    small = [AdjectivePair(f"a{k}er", f"b{k}er") for k in range(5)]
    assert len(sample_instances(small, names[:5], 10**6)) == 5 * 4 * 4 * 5 * 4


def test_too_small_lexicons_are_named():
    pairs = [AdjectivePair(f"a{k}er", f"b{k}er") for k in range(4)]
    with pytest.raises(VocabularyError, match="4 adjective pairs survive"):
        sample_instances(pairs, load_names(), 3)
