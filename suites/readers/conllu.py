"""CoNLL-U reader: UPOS / XPOS per word, deprel per (head, dependent) pair, arc prediction.

Per the CoNLL-U spec, multi-word token lines (`3-4 don't`) give the surface form of the words they
contain and empty nodes (`8.1`) are not part of the surface text: words inside a multi-word token
get the character span of their part when the parts spell the surface form (`do` + `n't`), else
the whole token's span; empty nodes are skipped. Character offsets come from `# text` (or the
forms joined by `SpaceAfter`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from suites.datasets.errors import DataNotFoundError
from suites.readers.text_files import utf8_lines
from suites.tasks import Task, TaskError, make_frame

ConlluTask = Literal["upos", "xpos", "deprel", "arc"]
TASKS = ("upos", "xpos", "deprel", "arc")
RANGE = re.compile(r"[0-9]+-[0-9]+")  # a multi-word token's ID, e.g. 3-4
EMPTY_NODE = re.compile(r"[0-9]+\.[0-9]+")  # an enhanced-graph empty node's ID, e.g. 8.1
PHENOMENA = {
    "upos": ("part of speech", "morphology"),
    "xpos": ("part of speech (fine)", "morphology"),
    "deprel": ("dependency label", "syntax"),
    "arc": ("dependency arc", "syntax"),
}


@dataclass(frozen=True)
class Word:
    """One syntactic word with its character span in the sentence text."""

    index: int
    form: str
    upos: str
    xpos: str
    head: int
    deprel: str
    start: int
    end: int
    feats: str = "_"  # the FEATS column, e.g. `Case=Nom|Number=Sing`


@dataclass(frozen=True)
class Sentence:
    """A sentence's text and its words (empty nodes left out)."""

    text: str
    words: list[Word]
    line: int


def _locate(text: str, form: str, cursor: int, path: Path, line: int) -> tuple[int, int]:
    start = text.find(form, cursor)
    if start < 0 or text[cursor:start].strip():
        raise TaskError(
            f"{path}:{line}: token {form!r} not found in the sentence text after character"
            f" {cursor}; the `# text` comment and the token forms disagree — fix one of them"
        )
    return start, start + len(form)


def _sentence(rows: list[tuple[int, list[str]]], text: str | None, path: Path) -> Sentence:
    surface: list[tuple[int, int, str, list[str]]] = []  # (first id, last id, form, cols)
    words: dict[int, list[str]] = {}
    for line, cols in rows:
        ident = cols[0]
        if EMPTY_NODE.fullmatch(ident):
            continue  # empty node: not in the surface text
        if RANGE.fullmatch(ident):
            first, last = (int(x) for x in ident.split("-"))
            if not 0 < first < last:
                raise TaskError(
                    f"{path}:{line}: ID range {ident!r} must run from a word to a later word"
                    " (e.g. 3-4)"
                )
            surface.append((first, last, cols[1], cols))
        elif ident.isdigit() and int(ident) > 0:
            if int(ident) in words:
                raise TaskError(
                    f"{path}:{line}: duplicate word ID {int(ident)} (also on line"
                    f" {words[int(ident)][10]}); number the words of a sentence 1, 2, 3, ..."
                )
            words[int(ident)] = [*cols, str(line)]
            if not any(a <= int(ident) <= b for a, b, _, _ in surface):
                surface.append((int(ident), int(ident), cols[1], cols))
        else:
            raise TaskError(
                f"{path}:{line}: ID {ident!r} is not a word (1, 2, ...), a multi-word range"
                " (3-4) or an empty node (8.1)"
            )
    if text is None:
        text = "".join(
            form + ("" if "SpaceAfter=No" in cols[9] else " ") for _, _, form, cols in surface
        ).rstrip()
    cursor, spans = 0, {}
    first_line = rows[0][0]
    for first, last, form, _ in surface:
        start, end = _locate(text, form, cursor, path, first_line)
        cursor = end
        parts = [words[i][1] for i in range(first, last + 1) if i in words]
        if first != last and "".join(parts) == form:
            offset = start
            for i in range(first, last + 1):
                spans[i] = (offset, offset + len(words[i][1]))
                offset += len(words[i][1])
        else:
            for i in range(first, last + 1):
                spans[i] = (start, end)
    out = []
    for i, cols in sorted(words.items()):
        head = _head(cols[6], len(words), path, int(cols[10]))
        out.append(Word(i, cols[1], cols[3], cols[4], head, cols[7], *spans[i], feats=cols[5]))
    return Sentence(text, out, first_line)


def _head(value: str, n_words: int, path: Path, line: int) -> int:
    """HEAD as an index (0 = root); -1 for `_` (no syntax annotated)."""
    if value == "_":
        return -1
    if not value.isdigit() or int(value) > n_words:
        raise TaskError(
            f"{path}:{line}: HEAD {value!r} is not a word of this sentence; HEAD is 0 (the root),"
            f" a word ID 1..{n_words}, or _ when the treebank has no syntax"
        )
    return int(value)


def read_sentences(path: str | Path) -> Iterator[Sentence]:
    """Sentences of a CoNLL-U file, with clear errors (file:line) on malformed lines."""
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"{path}: no such CoNLL-U file")
    rows: list[tuple[int, list[str]]] = []
    text: str | None = None
    for number, line in enumerate(utf8_lines(path), start=1):
        if line.startswith("#"):
            if line.startswith("# text = "):
                text = line[len("# text = ") :]
            continue
        if not line.strip():
            if rows:
                yield _sentence(rows, text, path)
            rows, text = [], None
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise TaskError(
                f"{path}:{number}: {len(cols)} tab-separated columns; CoNLL-U needs 10"
                " (ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC)"
            )
        rows.append((number, cols))
    if rows:
        yield _sentence(rows, text, path)


def _split_of(path: Path, split: str | None) -> str:
    if split is not None:
        return split
    name = path.name.lower()
    return next((s for s in ("train", "dev", "test") if s in name), "train")


def read_conllu(
    path: str | Path,
    task: ConlluTask = "upos",
    *,
    split: str | None = None,
    seed: int = 0,
    limit_sentences: int | None = None,
) -> Task:
    """A probing task from a CoNLL-U file.

    upos/xpos: one item per word (span task, key = the word). deprel: one item per dependency,
    spans (head word, dependent word), label = the relation; the root is skipped. arc: the
    dependencies as positives plus, per sentence, as many seeded word pairs that are no arc as
    negatives (binary span-pair task). `split` defaults to train/dev/test from the file name.
    """
    if task not in TASKS:
        raise TaskError(f"task={task!r}; choose one of {', '.join(TASKS)}")
    path = Path(path)
    which = _split_of(path, split)
    rng = random.Random(seed)
    rows: list[dict] = []
    for number, sentence in enumerate(read_sentences(path)):
        if limit_sentences is not None and number >= limit_sentences:
            break
        by_index = {w.index: w for w in sentence.words}
        if task in ("upos", "xpos"):
            for word in sentence.words:
                label = word.upos if task == "upos" else word.xpos
                if label != "_":
                    rows.append(
                        {
                            "text": sentence.text,
                            "spans": [(word.start, word.end)],
                            "label": label,
                            "split": which,
                        }
                    )
            continue
        arcs = [(by_index[w.head], w) for w in sentence.words if w.head in by_index]
        if task == "deprel":
            for head, dep in arcs:
                rows.append(
                    {
                        "text": sentence.text,
                        "label": dep.deprel,
                        "split": which,
                        "spans": [(head.start, head.end), (dep.start, dep.end)],
                    }
                )
            continue
        linked = {(h.index, d.index) for h, d in arcs}
        for head, dep in arcs:
            rows.append(
                {
                    "text": sentence.text,
                    "label": "arc",
                    "split": which,
                    "spans": [(head.start, head.end), (dep.start, dep.end)],
                }
            )
        pool = [
            (a, b)
            for a in sentence.words
            for b in sentence.words
            if a.index != b.index and (a.index, b.index) not in linked
        ]
        for head, dep in rng.sample(pool, min(len(arcs), len(pool))):
            rows.append(
                {
                    "text": sentence.text,
                    "label": "none",
                    "split": which,
                    "spans": [(head.start, head.end), (dep.start, dep.end)],
                }
            )
    phenomenon, kind = PHENOMENA[task]
    return Task(
        f"{path.stem}:{task}",
        make_frame(rows, "classification"),
        "classification",
        phenomenon=phenomenon,
        phenomenon_type=kind,
        metadata={"source": str(path), "task": task},
    )
