"""Accuracy, decision flips and calibration against hand computations on toy probabilities."""

from __future__ import annotations

import math

import polars as pl
import pytest

from suites.cc import calibrated_scores, table2, table4, table5
from suites.cc.semantic_metrics import accuracies, decision_flips

# (instance, schema) -> (P(adj2), P(ant2)) for the test sentences
TESTS = {
    (0, "S1"): (0.6, 0.4),
    (0, "S2"): (0.3, 0.7),
    (0, "S3"): (0.8, 0.2),
    (0, "S4"): (0.55, 0.45),
    (1, "S1"): (0.2, 0.8),
    (1, "S2"): (0.1, 0.9),
    (1, "S3"): (0.3, 0.7),
    (1, "S4"): (0.6, 0.4),
}
# (instance, method, base) -> five (P(adj2), P(ant2)) calibration contexts
UNIFORM = {
    (1, "S5"): ([0.1] * 5, [0.5] * 5),
    (0, "S6", "S1"): ([0.3] * 5, [0.6] * 5),
    (0, "S6", "S2"): ([0.1] * 5, [0.9] * 5),
    (0, "S6", "S3"): ([0.8] * 5, [0.1] * 5),
    (1, "S6", "S1"): ([0.1] * 5, [0.8] * 5),
    (1, "S6", "S2"): ([0.5] * 5, [0.5] * 5),
    (1, "S6", "S3"): ([0.5] * 5, [0.5] * 5),
    (1, "S7"): ([0.05] * 5, [0.6] * 5),
}
VARIED = {
    (0, "S5"): ([0.9, 0.8, 0.7, 0.6, 0.5], [0.1, 0.2, 0.1, 0.2, 0.4]),  # means 0.7, 0.2
    (0, "S7"): ([0.1, 0.3, 0.5, 0.7, 0.9], [0.2] * 5),  # means 0.5, 0.2
}


def _row(instance, schema, base, context, p):
    return {
        "model": "toy",
        "instance": instance,
        "schema": schema,
        "base": base,
        "context": context,
        "correct": "ant2" if base == "S3" else "adj2",
        "adj2_log_prob": math.log(p[0]),
        "ant2_log_prob": math.log(p[1]),
    }


@pytest.fixture(scope="module")
def scores() -> pl.DataFrame:
    rows = [_row(i, s, s, 0, p) for (i, s), p in TESTS.items()]
    contexts = {**UNIFORM, **VARIED}
    for key, (adj2, ant2) in contexts.items():
        instance, method = key[0], key[1]
        bases = [key[2]] if len(key) == 3 else ["S1", "S2", "S3"]
        for base in bases:
            rows += [_row(instance, method, base, c + 1, (adj2[c], ant2[c])) for c in range(5)]
    return pl.DataFrame(rows)


def _lookup(frame, column, **where):
    hits = frame.filter(*[pl.col(k) == v for k, v in where.items()])
    assert hits.height == 1, where
    return hits[column][0]


# Hand-computed (see the probabilities above): accuracy per (schema, calibration)
ACCURACY = {
    ("S1", "none"): 0.5,
    ("S2", "none"): 0.0,
    ("S3", "none"): 0.5,
    ("S4", "none"): 1.0,
    ("S1", "S5"): 0.5,
    ("S2", "S5"): 0.0,
    ("S3", "S5"): 0.0,
    ("S1", "S6"): 1.0,
    ("S2", "S6"): 0.5,
    ("S3", "S6"): 1.0,
    ("S1", "S7"): 0.5,
    ("S2", "S7"): 0.5,
    ("S3", "S7"): 0.0,
}
FLIPS = {
    ("S2", "none"): 0.5,
    ("S3", "none"): 1.0,
    ("S4", "none"): 0.5,
    ("S2", "S5"): 0.5,
    ("S3", "S5"): 0.5,
    ("S2", "S6"): 0.5,
    ("S3", "S6"): 0.0,
    ("S2", "S7"): 0.0,
    ("S3", "S7"): 0.5,
}


def test_accuracies_equal_hand_computation(scores):
    table = accuracies(scores)
    assert table.height == len(ACCURACY)
    for (schema, method), want in ACCURACY.items():
        assert _lookup(table, "accuracy", schema=schema, calibration=method) == pytest.approx(want)
        assert _lookup(table, "n", schema=schema, calibration=method) == 2


def test_decision_flips_equal_hand_computation(scores):
    table = decision_flips(scores)
    assert table.height == len(FLIPS)
    for (schema, method), want in FLIPS.items():
        assert _lookup(table, "flip", schema=schema, calibration=method) == pytest.approx(want)


def test_calibration_divides_by_the_mean_context_probability(scores):
    def p(frame, filler, **where):
        return math.exp(_lookup(frame, f"{filler}_log_prob", **where))

    s5 = calibrated_scores(scores, "S5")
    # instance 0, S1: P_c(adj2) = 0.6 / mean(0.9, 0.8, 0.7, 0.6, 0.5) = 0.6 / 0.7
    assert p(s5, "adj2", instance=0, schema="S1") == pytest.approx(0.6 / 0.7)
    assert p(s5, "ant2", instance=0, schema="S1") == pytest.approx(0.4 / 0.2)
    s7 = calibrated_scores(scores, "S7")
    assert p(s7, "adj2", instance=0, schema="S3") == pytest.approx(0.8 / 0.5)
    assert set(s7["schema"]) == {"S1", "S2", "S3"}  # S4 has no calibration contexts
    assert p(calibrated_scores(scores), "adj2", instance=1, schema="S4") == pytest.approx(0.6)


def test_paper_tables(scores):
    t2 = table2(scores)
    assert t2.columns == ["model", "accuracy_S1", "accuracy_S2", "flip_S2", "flip_S3", "flip_S4"]
    assert t2.row(0) == ("toy", 0.5, 0.0, 0.5, 1.0, 0.5)
    t4 = table4(scores)
    assert t4.columns == ["model", "test", "none", "S5", "S6", "S7"]
    assert t4.filter(pl.col("test") == "S1").row(0)[2:] == (0.5, 0.5, 1.0, 0.5)
    assert t4["test"].to_list() == ["S1", "S2", "S3"]
    t5 = table5(scores)
    assert t5.filter(pl.col("test") == "S3").row(0)[2:] == (1.0, 0.5, 0.0, 0.5)
    assert t5.filter(pl.col("test") == "S4").row(0)[2:] == (0.5, None, None, None)


def test_missing_calibration_contexts_are_named(scores):
    partial = scores.filter(~((pl.col("schema") == "S6") & (pl.col("base") == "S2")))
    with pytest.raises(ValueError, match="lack S6 calibration contexts"):
        calibrated_scores(partial, "S6")
    with pytest.raises(ValueError, match="calibration 'S8'"):
        calibrated_scores(scores, "S8")
