"""Synthetic CC data: minimal pairs from the grammar, and the feature-controlled subsets D_f.

`generate` draws shapes from the uniform PCFG. `feature_subsets` builds, per feature f, the
paper's D_f (spec §2): at every value v of f, `n_per_value` positives and as many negatives, so a
probe cannot read the class off f; the train part (train vocabulary) covers the lowest quartile
of f's range, the test part (test vocabulary) the whole range. Every negative is the reordering
of a positive drawn with it (same shape, same words), so the classes match at every value.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import polars as pl

from suites.cc.grammar import FEATURES, Shape, ShapeTable, draw, render, shape_table
from suites.cc.vocabulary import SyntaxVocabulary, load_syntax_vocabulary
from suites.errors import TaskError

SENTENCE_SCHEMA = {
    "sentence": pl.String,
    "label": pl.Int64,
    "length": pl.Int64,
    "cc_start": pl.Int64,
    "second_start": pl.Int64,
    "distance": pl.Int64,
    "pair": pl.Int64,
}
SPLIT_INDEX = {"train": 0, "test": 1}


def _pairs(
    shapes: Iterable[Shape],
    vocabulary: SyntaxVocabulary,
    rng: np.random.Generator,
    first_pair: int = 0,
) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for offset, shape in enumerate(shapes):
        filled = draw(shape, vocabulary, rng)
        for positive in (True, False):
            s = render(filled, positive)
            rows.append(
                {
                    "sentence": s.text,
                    "label": s.label,
                    "length": s.length,
                    "cc_start": s.cc_start,
                    "second_start": s.second_start,
                    "distance": s.distance,
                    "pair": first_pair + offset,
                }
            )
    return rows


def _vocabulary(split: str, vocabulary: SyntaxVocabulary | None) -> SyntaxVocabulary:
    return vocabulary if vocabulary is not None else load_syntax_vocabulary(split)


def generate(
    n_per_class: int,
    split: str = "train",
    seed: int = 0,
    *,
    vocabulary: SyntaxVocabulary | None = None,
) -> pl.DataFrame:
    """`n_per_class` minimal pairs (a CC instance, label 1, and its reordering, label 0).

    Columns: sentence, label, length, cc_start, second_start, distance (word positions as in
    `suites.cc.grammar`), pair (the id the two members of a pair share). `vocabulary` defaults to
    the shipped lists of `split`. The same arguments give the same frame.
    """
    if n_per_class < 1:
        raise TaskError(f"n_per_class={n_per_class}; ask for at least one sentence per class")
    words = _vocabulary(split, vocabulary)
    rng = np.random.default_rng([seed, SPLIT_INDEX.get(split, 2)])
    shapes = shape_table(words).sample(rng, n_per_class)
    return pl.DataFrame(_pairs(shapes, words, rng), schema=SENTENCE_SCHEMA)


def lowest_quartile(
    values: Sequence[int], v_min: int | None = None, v_max: int | None = None
) -> list[int]:
    """Values in `[v_min, v_min + (v_max - v_min) / 4]` (the paper's training range, spec §2)."""
    low = min(values) if v_min is None else v_min
    high = max(values) if v_max is None else v_max
    return [v for v in values if low <= v <= low + (high - low) / 4]


def feature_ranges(
    train: SyntaxVocabulary | None = None, test: SyntaxVocabulary | None = None
) -> dict[str, tuple[list[int], list[int]]]:
    """Per feature: (train values: lowest quartile of the range, test values: the whole range).

    The range [v_min, v_max] spans the values either split's grammar can produce.
    """
    tables = (shape_table(_vocabulary("train", train)), shape_table(_vocabulary("test", test)))
    ranges = {}
    for feature in FEATURES:
        train_values, test_values = (t.values(feature) for t in tables)
        low, high = min(train_values + test_values), max(train_values + test_values)
        ranges[feature] = (lowest_quartile(train_values, low, high), test_values)
    return ranges


def _subset(
    table: ShapeTable,
    feature: str,
    values: Sequence[int],
    n_per_value: int,
    vocabulary: SyntaxVocabulary,
    rng: np.random.Generator,
    split: str,
) -> pl.DataFrame:
    rows: list[dict[str, object]] = []
    for value in values:
        rows += _pairs(
            table.sample(rng, n_per_value, feature, value), vocabulary, rng, len(rows) // 2
        )
    frame = pl.DataFrame(rows, schema=SENTENCE_SCHEMA)
    return frame.with_columns(
        pl.lit(feature).alias("feature"),
        pl.col(feature).alias("value"),
        pl.lit(split).alias("split"),
    )


def feature_subsets(
    features: Sequence[str] = FEATURES,
    n_per_value: int = 1000,  # paper §3.1.3: 1000 sentences per value (per class, per split)
    seed: int = 0,
    *,
    train_vocabulary: SyntaxVocabulary | None = None,
    test_vocabulary: SyntaxVocabulary | None = None,
) -> dict[str, pl.DataFrame]:
    """D_f for each feature f: one frame with a `split` column (train / test) and `value` (= f).

    Train rows use the train vocabulary at the values of f's lowest quartile; test rows the test
    vocabulary at every value. Each (value, label) cell holds exactly `n_per_value` sentences.
    """
    unknown = [f for f in features if f not in FEATURES]
    if unknown:
        raise TaskError(f"unknown features {unknown}; choose among {', '.join(FEATURES)}")
    if n_per_value < 1:
        raise TaskError(f"n_per_value={n_per_value}; ask for at least one sentence per value")
    vocabularies = {
        "train": _vocabulary("train", train_vocabulary),
        "test": _vocabulary("test", test_vocabulary),
    }
    ranges = feature_ranges(vocabularies["train"], vocabularies["test"])
    subsets = {}
    for feature in features:
        parts = []
        for split, values in zip(("train", "test"), ranges[feature]):
            rng = np.random.default_rng([seed, FEATURES.index(feature), SPLIT_INDEX[split]])
            words = vocabularies[split]
            parts.append(
                _subset(shape_table(words), feature, values, n_per_value, words, rng, split)
            )
        subsets[feature] = pl.concat(parts)
    return subsets
