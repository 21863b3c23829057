"""Zorro paradigms as Holmes sentence classification: good vs bad sentence of each minimal pair.

Zorro (Huebner et al. 2021) writes one paradigm per text file (`sentences/babyberta/<name>.txt`):
its README says odd-numbered lines (1, 3, ...) are ungrammatical and the even-numbered line after
each is its grammatical twin, 2,000 pairs per file. Holmes names the task `zorro-<name>`; as for
BLiMP, both sentences of a pair share a split (seeded 70/10/20 over pairs, Holmes §4.3).
"""

from __future__ import annotations

import random
from pathlib import Path

from suites.datasets.errors import DataNotFoundError
from suites.holmes.blimp import HOLMES_SPLITS
from suites.holmes.sampling import split_groups
from suites.readers.text_files import utf8_lines
from suites.tasks import Task, TaskError, make_frame

DATASET = "zorro"  # the registry's name
PREFIX = "zorro-"  # Holmes' task names: zorro-<paradigm file stem>
SENTENCE = "sentence classification"
# The Holmes inventory's (phenomenon type, phenomenon) of the paradigms, by file-name prefix.
HOLMES_TAGS = {
    "agreement_determiner_noun": ("morphology", "determiner noun agreement"),
    "agreement_subject_verb": ("syntax", "subject-verb agreement"),
    "anaphor_agreement": ("syntax", "anaphor agreement"),
    "argument_structure": ("syntax", "argument structure"),
    "binding": ("syntax", "binding"),
    "case": ("syntax", "case"),
    "ellipsis": ("syntax", "ellipsis"),
    "filler-gap": ("syntax", "filler gap"),
    "island-effects": ("syntax", "island effects"),
    "local_attractor": ("syntax", "local attractor"),
    "npi_licensing": ("syntax", "negative polarity item licensing"),
    "quantifiers": ("semantics", "quantifiers"),
}


def holmes_tags(paradigm: str) -> tuple[str, str, str]:
    """(phenomenon type, phenomenon, probe type) of paradigm file stem `paradigm`."""
    for prefix, (kind, phenomenon) in HOLMES_TAGS.items():
        if paradigm.startswith(f"{prefix}-"):
            return kind, phenomenon, SENTENCE
    raise TaskError(
        f"Zorro paradigm {paradigm!r} has no Holmes phenomenon; known prefixes:"
        f" {', '.join(HOLMES_TAGS)}"
    )


def read_zorro(
    path: str | Path,
    *,
    pairs: int | None = None,
    seed: int = 0,
) -> Task:
    """One Zorro paradigm file as a binary task tagged as the Holmes inventory tags it; `pairs`
    keeps a seeded random subset of that many minimal pairs."""
    source = Path(path)
    if not source.is_file():
        raise DataNotFoundError(f"{source}: no such Zorro paradigm file (<paradigm>.txt)")
    lines = [line.strip() for line in utf8_lines(source) if line.strip()]
    if not lines or len(lines) % 2:
        raise TaskError(
            f"{source}: {len(lines)} sentences; a Zorro paradigm holds pairs (an ungrammatical"
            " sentence, then its grammatical twin), so an even number of lines"
        )
    records = [(lines[i], lines[i + 1]) for i in range(0, len(lines), 2)]
    numbers = list(range(len(records)))
    if pairs is not None:
        if pairs < 1:
            raise TaskError(f"pairs={pairs}: keep at least one minimal pair")
        numbers = sorted(random.Random(seed).sample(numbers, min(pairs, len(numbers))))
    rows, groups = [], []
    for number in numbers:
        bad, good = records[number]
        for text, label in ((good, "good"), (bad, "bad")):
            rows.append({"text": text, "label": label, "split": "train"})
            groups.append(str(number))
    phenomenon_type, phenomenon, probe_type = holmes_tags(source.stem)
    task = Task(
        name=f"{PREFIX}{source.stem}",
        frame=make_frame(rows, "classification"),
        target_type="classification",
        labels=("bad", "good"),
        phenomenon=phenomenon,
        phenomenon_type=phenomenon_type,
        metadata={"source": str(source), "pairs": len(numbers), "probe_type": probe_type},
    )
    return split_groups(task, groups, HOLMES_SPLITS, seed)
