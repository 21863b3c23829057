"""BLiMP paradigms as Holmes sentence classification: good vs bad sentence of each minimal pair.

A paradigm file (`<UID>.jsonl`, fields `sentence_good`, `sentence_bad`, `UID`, `pairID`, `field`,
`linguistics_term`) becomes the task `blimp-<UID>` with two items per pair (labels `good`, `bad`).
Both sentences of a pair share a split (seeded 70/10/20 over pairs, Holmes §4.3).
"""

from __future__ import annotations

import random
from pathlib import Path

from suites.holmes.inventory import PHENOMENON_TYPES, lookup
from suites.holmes.sampling import split_groups
from suites.jsonl import read_jsonl
from suites.tasks import Task, TaskError, make_frame

HOLMES_SPLITS = (0.7, 0.1, 0.2)  # Holmes §4.3: 70/10/20 where the data defines none
FIELDS = ("sentence_good", "sentence_bad")


def read_blimp(
    path: str | Path,
    *,
    pairs: int | None = None,
    seed: int = 0,
    data: str | Path | None = None,
) -> Task:
    """One BLiMP paradigm file as a binary sentence-classification task.

    `pairs` keeps a seeded random subset of that many minimal pairs. Phenomenon and type come
    from the Holmes inventory (`blimp-<UID>`), else from the file's `linguistics_term`/`field`.
    """
    source = Path(path)
    if not source.is_file():
        raise FileNotFoundError(f"{source}: no such BLiMP paradigm file (<UID>.jsonl)")
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
    entry = lookup(name, data)
    first = records[0][1]
    field = str(first.get("field", "")).split("/")[0].split("_")[0]
    task = Task(
        name=name,
        frame=make_frame(rows, "class"),
        target_type="class",
        labels=("bad", "good"),
        phenomenon=entry.phenomenon if entry else str(first.get("linguistics_term", "")),
        phenomenon_type=entry.phenomenon_type
        if entry
        else (field if field in PHENOMENON_TYPES else "syntax"),
        metadata={
            "source": str(source),
            "pairs": len(records),
            "probe_type": "sentence classification",
        },
    )
    return split_groups(task, groups, HOLMES_SPLITS, seed)


def _records(source: Path) -> list[tuple[int, dict]]:
    return read_jsonl(source, FIELDS, "a BLiMP line")
