"""One UD morphological feature as a word-classification task (`ud-german-gsd:feats:Case`).

Each word whose FEATS column sets the feature is one item labelled with its value (`Case=Nom`
gives `Nom`; a multi-valued `PronType=Int,Rel` keeps `Int,Rel` as one label); words without the
feature are left out, as in per-feature morphological probing (the feature is undefined there,
not absent). Spans and texts are those of `suites.readers.conllu`.
"""

from __future__ import annotations

from pathlib import Path

from suites.readers.conllu import _split_of, read_sentences
from suites.tasks import Task, TaskError, make_frame

FEATS_PREFIX = "feats:"  # the task spelling: `feats:<Feature>`


def feature_of(task: str) -> str:
    """The feature a `feats:<Feature>` task names; an error saying how to spell one otherwise."""
    feature = task.removeprefix(FEATS_PREFIX)
    if not task.startswith(FEATS_PREFIX) or not feature or "=" in feature or "|" in feature:
        raise TaskError(
            f"task {task!r}: a feature task names one UD feature, e.g. feats:Case or"
            " feats:Number (the part before `=` in the FEATS column)"
        )
    return feature


def word_features(feats: str) -> dict[str, str]:
    """A FEATS column as {feature: value}; `_` is no feature."""
    if feats in ("", "_"):
        return {}
    pairs = (item.partition("=") for item in feats.split("|"))
    return {name: value for name, _, value in pairs if value}


def read_feature(
    path: str | Path,
    feature: str,
    *,
    split: str | None = None,
    limit_sentences: int | None = None,
) -> Task:
    """A task classifying the value of UD feature `feature` of every word that carries it."""
    path = Path(path)
    which = _split_of(path, split)
    rows = []
    for number, sentence in enumerate(read_sentences(path)):
        if limit_sentences is not None and number >= limit_sentences:
            break
        for word in sentence.words:
            value = word_features(word.feats).get(feature)
            if value is not None:
                rows.append(
                    {
                        "text": sentence.text,
                        "spans": [(word.start, word.end)],
                        "label": value,
                        "split": which,
                    }
                )
    if not rows:
        raise TaskError(
            f"{path}: no word has the feature {feature!r} in the sentences read; UD features"
            " are case-sensitive (Case, Number, Gender, Tense, ...): check the treebank's FEATS"
        )
    return Task(
        f"{path.stem}:{FEATS_PREFIX}{feature}",
        make_frame(rows, "classification"),
        "classification",
        phenomenon=f"morphological feature {feature}",
        phenomenon_type="morphology",
        metadata={"source": str(path), "task": f"{FEATS_PREFIX}{feature}"},
    )
