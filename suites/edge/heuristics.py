"""Annotation-artifact heuristics of edge-probing data (Mem-Exact, Mem-Freq, Mem-Uniform).

Given a train and a test set, each heuristic "classifies" a test item from the train set alone:
- mem_exact: correct when the test item's (key, label) occurs in train.
- mem_freq: when the key occurs in train with non-uniform label counts (over the train label set:
  more than two distinct count values, or exactly two with no zero — the reference code's rule, so
  keys seen with one label or with equal counts are skipped), sample a label from the key's train
  distribution; correct when it equals the gold label.
- mem_uniform: when the key occurs in train, sample uniformly among its distinct train labels.
A multi-label item's label is its sorted tuple. Keys: the span text, or the ordered tuple of the
two span texts. `legacy_keys=True` reproduces the authors' code (Josh1108/EPtest, datafilter.py):
Mem-Uniform keys a single span by the *set of its characters* ("dog" == "god"), and all three key a
span pair by the unordered set of its two texts (Mem-Exact folds the label into that set too).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable

import numpy as np
import polars as pl

from suites.tasks import Task

HEURISTICS = ("mem_exact", "mem_freq", "mem_uniform")


def _label(value: object) -> Hashable:
    return tuple(sorted(value)) if isinstance(value, list | tuple | pl.Series) else value  # type: ignore[arg-type]


def _span_texts(frame: pl.DataFrame) -> list[tuple[str, ...]]:
    return [
        tuple(text[s:e] for s, e in spans) if spans else (text,)
        for text, spans in frame.select("text", "spans").iter_rows()
    ]


def _key(texts: tuple[str, ...], heuristic: str, legacy: bool) -> Hashable:
    if not legacy:
        return texts
    if len(texts) >= 2:
        return frozenset(texts)
    return frozenset(texts[0]) if heuristic == "mem_uniform" else texts[0]


def _exact_key(texts: tuple[str, ...], label: Hashable, legacy: bool) -> Hashable:
    if legacy and len(texts) >= 2:
        return frozenset((*texts, label))
    return (_key(texts, "mem_exact", legacy), label)


def _uniform_counts(counts: list[int]) -> bool:
    distinct = Counter(counts)
    return not (len(distinct) > 2 or (len(distinct) == 2 and 0 not in distinct))


def classify(train: Task, test: Task, *, seed: int = 0, legacy_keys: bool = False) -> pl.DataFrame:
    """The test frame with one boolean column per heuristic: did it classify the item correctly."""
    train_texts, test_texts = _span_texts(train.frame), _span_texts(test.frame)
    train_labels = [_label(v) for v in train.frame["label"].to_list()]
    test_labels = [_label(v) for v in test.frame["label"].to_list()]
    label_index: dict[Hashable, int] = {}
    for label in train_labels:
        label_index.setdefault(label, len(label_index))

    exact = {_exact_key(t, y, legacy_keys) for t, y in zip(train_texts, train_labels)}
    counts: dict[Hashable, list[int]] = defaultdict(lambda: [0] * len(label_index))
    seen: dict[Hashable, list[Hashable]] = defaultdict(list)
    for texts, label in zip(train_texts, train_labels):
        counts[_key(texts, "mem_freq", legacy_keys)][label_index[label]] += 1
        labels = seen[_key(texts, "mem_uniform", legacy_keys)]
        if label not in labels:
            labels.append(label)

    freq_rng = np.random.default_rng([seed, 1])
    uniform_rng = np.random.default_rng([seed, 2])
    result: dict[str, list[bool]] = {name: [] for name in HEURISTICS}
    for texts, label in zip(test_texts, test_labels):
        result["mem_exact"].append(_exact_key(texts, label, legacy_keys) in exact)
        weights = counts.get(_key(texts, "mem_freq", legacy_keys))
        hit = False
        if weights is not None and not _uniform_counts(weights):
            p = np.asarray(weights, dtype=float) / sum(weights)
            hit = label_index.get(label) == int(freq_rng.choice(len(weights), p=p))
        result["mem_freq"].append(hit)
        options = seen.get(_key(texts, "mem_uniform", legacy_keys))
        result["mem_uniform"].append(
            options is not None
            and len(options) > 0
            and options[int(uniform_rng.integers(len(options)))] == label
        )
    return test.frame.with_columns(pl.Series(name, values) for name, values in result.items())


def heuristics(
    train: Task, test: Task, *, seed: int = 0, legacy_keys: bool = False
) -> pl.DataFrame:
    """Columns heuristic, accuracy (% of the test set it classifies correctly), correct, total."""
    return accuracy_table(classify(train, test, seed=seed, legacy_keys=legacy_keys))


def accuracy_table(marked: pl.DataFrame) -> pl.DataFrame:
    """`heuristics`' table from a test frame that `classify` has already marked."""
    return pl.DataFrame(
        {
            "heuristic": list(HEURISTICS),
            "accuracy": [100.0 * marked[h].mean() for h in HEURISTICS],  # type: ignore[operator]
            "correct": [int(marked[h].sum()) for h in HEURISTICS],
            "total": [marked.height] * len(HEURISTICS),
        }
    )


def filtered_test_sets(
    train: Task, test: Task, *, seed: int = 0, legacy_keys: bool = False
) -> dict[str, Task]:
    """Per heuristic, the test items it does not classify correctly (the paper's filtered sets)."""
    marked = classify(train, test, seed=seed, legacy_keys=legacy_keys)
    return {
        name: test.with_frame(
            marked.filter(~pl.col(name)).drop(HEURISTICS), name=f"{test.name}|{name}"
        )
        for name in HEURISTICS
    }
