"""The semantic test's sentences: schemata S1-S7 (spec §3) filled from sampled instances.

An instance fixes ADJ1/ANT1 and ADJ2/ANT2 (two different pairs, each randomly oriented), NAME1 and
NAME2, five name pairs (NAME3, NAME4) and five third adjectives ADJ3 for the calibration contexts.
S1-S4 are the test sentences (S3's correct filler is ANT2, the others' ADJ2). The calibration
contexts C_1..C_5 of a base S_b (b = 1, 2, 3) are: S5, the short scenario without any CC, with
the five name pairs; S6, S_b with the last sentence's names replaced by the five (NAME3, NAME4);
S7, S_b with the scenario's ADJ1 replaced by the five ADJ3. `[MASK]` marks the filler slot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from suites.cc.errors import VocabularyError
from suites.cc.lexicon import AdjectivePair
from suites.errors import TaskError

MASK = "[MASK]"
TEST_SCHEMATA = ("S1", "S2", "S3", "S4")
CALIBRATION_SCHEMATA = ("S5", "S6", "S7")
CALIBRATED_BASES = ("S1", "S2", "S3")  # the paper calibrates S1-S3 (its Tables 4 and 5)
CONTEXTS = 5  # paper §4.1.3: five calibration examples per method


@dataclass(frozen=True)
class SemanticInstance:
    """The words of one test item and of its calibration contexts."""

    adj1: str
    ant1: str
    adj2: str
    ant2: str
    name1: str
    name2: str
    calibration_names: tuple[tuple[str, str], ...]  # (NAME3, NAME4) per context
    calibration_adjectives: tuple[str, ...]  # ADJ3 per context


def _rule(x: str, y: str) -> str:
    return f"The {x} you are, the {y} you are."


def _scenario(first: str, adjective: str, second: str) -> str:
    return f"{first} is {adjective} than {second}."


def _question(first: str, second: str) -> str:
    return f"Therefore, {first} is {MASK} than {second}."


def _rules(base: str, i: SemanticInstance) -> str:
    """The two CC sentences of a base schema."""
    if base == "S2":
        return f"{_rule(i.ant1, i.ant2)} {_rule(i.adj1, i.adj2)}"
    if base == "S3":
        return f"{_rule(i.adj1, i.ant2)} {_rule(i.ant1, i.adj2)}"
    return f"{_rule(i.adj1, i.adj2)} {_rule(i.ant1, i.ant2)}"


def schema_sentence(schema: str, i: SemanticInstance) -> str:
    """S1-S4 for an instance, with `[MASK]` at the filler."""
    if schema not in TEST_SCHEMATA:
        raise TaskError(f"schema {schema!r} is not a test schema; choose one of {TEST_SCHEMATA}")
    first, second = (i.name2, i.name1) if schema == "S4" else (i.name1, i.name2)
    return f"{_rules(schema, i)} {_scenario(first, i.adj1, second)} {_question(first, second)}"


def calibration_sentence(method: str, base: str, i: SemanticInstance, context: int) -> str:
    """Calibration context `context` (0-based) of `method` (S5/S6/S7) for base schema `base`."""
    if base not in CALIBRATED_BASES:
        raise TaskError(f"base {base!r} has no calibration contexts; choose {CALIBRATED_BASES}")
    if method == "S5":
        first, second = i.calibration_names[context]
        return f"{_scenario(first, i.adj1, second)} {_question(first, second)}"
    if method == "S6":
        third, fourth = i.calibration_names[context]
        return f"{_rules(base, i)} {_scenario(i.name1, i.adj1, i.name2)} {_question(third, fourth)}"
    if method == "S7":
        adjective = i.calibration_adjectives[context]
        return (
            f"{_rules(base, i)} {_scenario(i.name1, adjective, i.name2)} "
            f"{_question(i.name1, i.name2)}"
        )
    raise TaskError(f"calibration method {method!r}; choose one of {CALIBRATION_SCHEMATA}")


def sample_instances(
    pairs: Sequence[AdjectivePair], names: Sequence[str], n: int, seed: int = 0
) -> list[SemanticInstance]:
    """`n` distinct instances (fewer if the lexicon allows fewer), seeded.

    (ADJ1 pair, ADJ2 pair, their orientations, NAME1, NAME2) are drawn without replacement; the
    calibration names avoid NAME1/NAME2 and the ADJ3s come from the other pairs.
    """
    if len(pairs) < 5:
        raise VocabularyError(
            f"{len(pairs)} adjective pairs survive; the test needs at least 5 (two for the"
            f" instance, the others give {CONTEXTS} third adjectives). Add single-token pairs"
        )
    if len(names) < 5:
        raise VocabularyError(f"{len(names)} names given; the test needs at least 5")
    rng = np.random.default_rng(seed)
    n_pairs, n_names = len(pairs), len(names)
    total = n_pairs * (n_pairs - 1) * 4 * n_names * (n_names - 1)
    codes = rng.choice(total, size=min(n, total), replace=False)
    instances = []
    for code in codes.tolist():
        code, p1 = divmod(code, n_pairs)
        code, p2 = divmod(code, n_pairs - 1)
        code, flips = divmod(code, 4)
        n2, n1 = divmod(code, n_names)
        n2 = n2 + (n2 >= n1)
        p2 = p2 + (p2 >= p1)
        first, second = _oriented(pairs[p1], flips & 1), _oriented(pairs[p2], flips >> 1)
        others = [n for k, n in enumerate(names) if k not in (n1, n2)]
        name_pairs = [(a, b) for a in others for b in others if a != b]
        picked = rng.choice(len(name_pairs), size=CONTEXTS, replace=False)
        spare = [
            w for k, p in enumerate(pairs) if k not in (p1, p2) for w in (p.comparative, p.antonym)
        ]
        adjectives = rng.choice(len(spare), size=CONTEXTS, replace=False)
        instances.append(
            SemanticInstance(
                adj1=first[0],
                ant1=first[1],
                adj2=second[0],
                ant2=second[1],
                name1=names[n1],
                name2=names[n2],
                calibration_names=tuple(name_pairs[k] for k in picked.tolist()),
                calibration_adjectives=tuple(spare[k] for k in adjectives.tolist()),
            )
        )
    return instances


def _oriented(pair: AdjectivePair, flip: int) -> tuple[str, str]:
    return (pair.antonym, pair.comparative) if flip else (pair.comparative, pair.antonym)


def semantic_sentences(instances: Sequence[SemanticInstance]) -> pl.DataFrame:
    """Every sentence of the test: instance, schema, base, context, text, adj2, ant2, correct.

    Test rows have `base == schema` and `context == 0`; calibration rows `context` 1..5.
    `correct` names the right filler ("adj2", or "ant2" for S3).
    """
    rows = []
    for index, inst in enumerate(instances):
        common = {"instance": index, "adj2": inst.adj2, "ant2": inst.ant2}
        for schema in TEST_SCHEMATA:
            rows.append(
                {
                    **common,
                    "schema": schema,
                    "base": schema,
                    "context": 0,
                    "text": schema_sentence(schema, inst),
                    "correct": "ant2" if schema == "S3" else "adj2",
                }
            )
        for base in CALIBRATED_BASES:
            for method in CALIBRATION_SCHEMATA:
                for context in range(CONTEXTS):
                    rows.append(
                        {
                            **common,
                            "schema": method,
                            "base": base,
                            "context": context + 1,
                            "text": calibration_sentence(method, base, inst, context),
                            "correct": "ant2" if base == "S3" else "adj2",
                        }
                    )
    return pl.DataFrame(rows).select(
        "instance", "schema", "base", "context", "text", "adj2", "ant2", "correct"
    )
