"""BLiMP paradigms as Holmes sentence classification: good vs bad sentence of each minimal pair.

A paradigm file (`<UID>.jsonl`, fields `sentence_good`, `sentence_bad`, `UID`, `pairID`, `field`,
`linguistics_term`) becomes the task `blimp-<UID>` with two items per pair (labels `good`, `bad`).
Both sentences of a pair share a split (seeded 70/10/20 over pairs, Holmes §4.3).
"""

from __future__ import annotations

import random
from pathlib import Path

from suites.datasets.errors import DataNotFoundError
from suites.holmes.sampling import split_groups
from suites.readers.jsonl import read_jsonl
from suites.tasks import Task, TaskError, make_frame

HOLMES_SPLITS = (0.7, 0.1, 0.2)  # Holmes §4.3: 70/10/20 where the data defines none
FIELDS = ("sentence_good", "sentence_bad")
# BLiMP's own `field` and `linguistics_term` of a paradigm, named as the Holmes inventory names
# them (Waldis et al. 2024): Holmes files BLiMP's syntax-semantics paradigms under syntax. This
# reproduces the inventory's type and phenomenon for every one of the 67 paradigms.
HOLMES_TYPE = {"syntax_semantics": "syntax", "syntax/semantics": "syntax"}
HOLMES_PHENOMENON = {
    "s-selection": "argument structure",
    "control_raising": "control / raising",
    "npi_licensing": "negative polarity item licensing",
    "subject_verb_agreement": "subject-verb agreement",
    "filler_gap_dependency": "filler gap",
}


def read_blimp(
    path: str | Path,
    *,
    pairs: int | None = None,
    seed: int = 0,
) -> Task:
    """One BLiMP paradigm file as a binary sentence-classification task.

    `pairs` keeps a seeded random subset of that many minimal pairs. Phenomenon and type are the
    file's `linguistics_term` and `field`, named as the Holmes inventory names them.
    """
    source = Path(path)
    if not source.is_file():
        raise DataNotFoundError(f"{source}: no such BLiMP paradigm file (<UID>.jsonl)")
    records = _records(source)
    if pairs is not None:
        if pairs < 1:
            raise TaskError(f"pairs={pairs}: keep at least one minimal pair")
        records = sorted(
            random.Random(seed).sample(records, min(pairs, len(records))), key=lambda r: r[0]
        )
    rows, groups = [], []
    for number, record in records:
        for field, label in zip(FIELDS, ("good", "bad")):
            rows.append({"text": record[field].strip(), "label": label, "split": "train"})
            groups.append(str(record.get("pairID", number)))
    uid = records[0][1].get("UID") or source.stem
    name = f"blimp-{uid}"
    first = records[0][1]
    field, term = str(first.get("field", "")), str(first.get("linguistics_term", ""))
    task = Task(
        name=name,
        frame=make_frame(rows, "classification"),
        target_type="classification",
        labels=("bad", "good"),
        phenomenon=HOLMES_PHENOMENON.get(term, term.replace("_", " ")),
        phenomenon_type=HOLMES_TYPE.get(field, field),
        metadata={
            "source": str(source),
            "pairs": len(records),
            "probe_type": "sentence classification",
        },
    )
    return split_groups(task, groups, HOLMES_SPLITS, seed)


def _records(source: Path) -> list[tuple[int, dict]]:
    return read_jsonl(source, FIELDS, "a BLiMP line")
