"""The semantic test's arithmetic, pure functions over a table of filler log-probabilities.

Input (`scores`): one row per sentence with columns model, instance, schema, base, context,
correct ("adj2"/"ant2"), adj2_log_prob, ant2_log_prob (see `schemata.semantic_sentences`).
A decision is correct when the correct filler scores strictly higher than the other.
Calibration (spec §3): P_c(a | S_b) = P(a | S_b) / mean_{i=1..5} P(a | C_i), elementwise over the
two fillers a, computed in log space: log P(a | S_b) - log mean_i exp(log P(a | C_i)).
Accuracy: share of correct decisions. Decision flip (S2, S3, S4): share of instances whose
decision (correct or not) differs between S1 and the variant, both scored the same way.
"""

from __future__ import annotations

import polars as pl

from suites.cc.schemata import CALIBRATED_BASES, CALIBRATION_SCHEMATA, TEST_SCHEMATA
from suites.errors import TaskError

UNCALIBRATED = "none"
METHODS = (UNCALIBRATED, *CALIBRATION_SCHEMATA)
FILLERS = ("adj2_log_prob", "ant2_log_prob")
KEYS = ("model", "instance")


def _log_mean_exp(column: str) -> pl.Expr:
    top = pl.col(column).max()
    return ((pl.col(column) - top).exp().mean().log() + top).alias(column)


def calibrated_scores(scores: pl.DataFrame, method: str = UNCALIBRATED) -> pl.DataFrame:
    """Per model, instance and test schema: the two fillers' (calibrated) log-scores."""
    if method not in METHODS:
        raise TaskError(f"calibration {method!r}; choose one of {METHODS}")
    tests = scores.filter(pl.col("context") == 0, pl.col("schema").is_in(TEST_SCHEMATA))
    tests = tests.select(*KEYS, "schema", "correct", *FILLERS)
    if method == UNCALIBRATED:
        return tests
    contexts = scores.filter(pl.col("schema") == method, pl.col("context") > 0)
    prior = contexts.group_by(*KEYS, "base").agg(_log_mean_exp(c) for c in FILLERS)
    missing = tests.filter(pl.col("schema").is_in(CALIBRATED_BASES)).join(
        prior, left_on=[*KEYS, "schema"], right_on=[*KEYS, "base"], how="anti"
    )
    if missing.height:
        raise TaskError(
            f"{missing.height} test sentences lack {method} calibration contexts,"
            f" e.g. instance {missing['instance'][0]} {missing['schema'][0]}"
        )
    joined = tests.join(prior, left_on=[*KEYS, "schema"], right_on=[*KEYS, "base"], suffix="_prior")
    return joined.select(
        *KEYS, "schema", "correct", *[(pl.col(c) - pl.col(f"{c}_prior")).alias(c) for c in FILLERS]
    )


def decisions(scores: pl.DataFrame, method: str = UNCALIBRATED) -> pl.DataFrame:
    """model, instance, schema, calibration, right (bool: the correct filler scores higher)."""
    table = calibrated_scores(scores, method)
    right = (
        pl.when(pl.col("correct") == "adj2")
        .then(pl.col("adj2_log_prob") > pl.col("ant2_log_prob"))
        .otherwise(pl.col("ant2_log_prob") > pl.col("adj2_log_prob"))
    )
    return table.select(*KEYS, "schema", pl.lit(method).alias("calibration"), right.alias("right"))


def _all_decisions(scores: pl.DataFrame) -> pl.DataFrame:
    return pl.concat([decisions(scores, m) for m in METHODS])


def accuracies(scores: pl.DataFrame) -> pl.DataFrame:
    """Long table: model, schema, calibration, accuracy, n (every test schema x method)."""
    return (
        _all_decisions(scores)
        .group_by("model", "schema", "calibration", maintain_order=True)
        .agg(pl.col("right").mean().alias("accuracy"), pl.len().cast(pl.Int64).alias("n"))
        .sort("model", "schema", "calibration")
    )


def decision_flips(scores: pl.DataFrame) -> pl.DataFrame:
    """Long table: model, schema (S2-S4), calibration, flip (share of decisions changed vs S1)."""
    made = _all_decisions(scores)
    base = made.filter(pl.col("schema") == "S1").select(
        *KEYS, "calibration", pl.col("right").alias("right_s1")
    )
    variants = made.filter(pl.col("schema") != "S1").join(base, on=[*KEYS, "calibration"])
    return (
        variants.group_by("model", "schema", "calibration", maintain_order=True)
        .agg(
            (pl.col("right") != pl.col("right_s1")).mean().alias("flip"),
            pl.len().cast(pl.Int64).alias("n"),
        )
        .sort("model", "schema", "calibration")
    )


def _wide(long: pl.DataFrame, value: str, schemata: tuple[str, ...]) -> pl.DataFrame:
    table = long.filter(pl.col("schema").is_in(schemata)).pivot(
        on="calibration", index=["model", "schema"], values=value
    )
    for method in METHODS:
        if method not in table.columns:
            table = table.with_columns(pl.lit(None, dtype=pl.Float64).alias(method))
    return table.select("model", pl.col("schema").alias("test"), *METHODS).sort("model", "test")


def table2(scores: pl.DataFrame) -> pl.DataFrame:
    """The paper's Table 2: accuracy on S1 and S2, decision flips S1->S2, S3, S4 (uncalibrated)."""
    acc = accuracies(scores).filter(pl.col("calibration") == UNCALIBRATED)
    flips = decision_flips(scores).filter(pl.col("calibration") == UNCALIBRATED)
    wide_acc = acc.pivot(on="schema", index="model", values="accuracy")
    wide_flip = flips.pivot(on="schema", index="model", values="flip")
    return (
        wide_acc.select(
            "model", pl.col("S1").alias("accuracy_S1"), pl.col("S2").alias("accuracy_S2")
        )
        .join(
            wide_flip.select("model", *[pl.col(s).alias(f"flip_{s}") for s in ("S2", "S3", "S4")]),
            on="model",
        )
        .sort("model")
    )


def table4(scores: pl.DataFrame) -> pl.DataFrame:
    """The paper's Table 4: accuracy on S1-S3 without and with each calibration (S5, S6, S7)."""
    return _wide(accuracies(scores), "accuracy", CALIBRATED_BASES)


def table3(scores: pl.DataFrame, models: list[str] | None = None) -> pl.DataFrame:
    """The paper's Table 3: Table 4 for selected models (the paper: its three largest)."""
    table = table4(scores)
    return table if models is None else table.filter(pl.col("model").is_in(models))


def table5(scores: pl.DataFrame) -> pl.DataFrame:
    """The paper's Table 5: decision flips S1->S2, S3 (each calibration) and S4 (uncalibrated)."""
    return _wide(decision_flips(scores), "flip", ("S2", "S3", "S4"))
