"""Benchmark inputs from UD English EWT: sentences, one item per word, and long documents.

The treebank is read from `$LINGPROBE_DATA/ud_english_ewt` (or `../shared/data` next to the
checkout); benchmarks that need it are skipped with a message when it is not there.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from internals import SpanItem
from suites.data_paths import DataNotFoundError, shared_data
from suites.edge.conllu import Sentence, read_sentences

FILES = {"dev": "en_ewt-ud-dev.conllu", "train": "en_ewt-ud-train.conllu"}


def ewt_path(split: str = "dev") -> Path:
    """The treebank file of `split`, or a pytest skip saying where it was looked for."""
    try:
        path = shared_data() / "ud_english_ewt" / FILES[split]
    except DataNotFoundError as error:
        pytest.skip(f"UD English EWT not found ({error}); set LINGPROBE_DATA=/path/to/data")
    if not path.is_file():
        pytest.skip(f"{path} not found; set LINGPROBE_DATA to the folder holding ud_english_ewt/")
    return path


def sentences(n: int | None, split: str = "dev") -> list[Sentence]:
    """The first `n` sentences (all with None): text and words with character spans."""
    out = []
    for sentence in read_sentences(ewt_path(split)):
        out.append(sentence)
        if len(out) == n:
            break
    return out


def word_items(n: int | None, split: str = "dev") -> list[SpanItem]:
    """One SpanItem per word of the first `n` sentences (the shape of a UPOS task)."""
    return [
        SpanItem(s.text, spans=((w.start, w.end),)) for s in sentences(n, split) for w in s.words
    ]


def first_words(n_items: int, split: str = "train") -> list[SpanItem]:
    """Exactly `n_items` word items, sentence after sentence."""
    items: list[SpanItem] = []
    for sentence in read_sentences(ewt_path(split)):
        items.extend(SpanItem(sentence.text, spans=((w.start, w.end),)) for w in sentence.words)
        if len(items) >= n_items:
            return items[:n_items]
    raise ValueError(f"EWT {split} has only {len(items)} words; asked for {n_items}")


def documents(n_documents: int, words_each: int, split: str = "train") -> list[Sentence]:
    """Long documents: consecutive sentences joined until each has about `words_each` words."""
    docs: list[Sentence] = []
    text, words, first_line = "", [], 0
    for sentence in read_sentences(ewt_path(split)):
        shift = len(text) + (1 if text else 0)
        text = f"{text} {sentence.text}" if text else sentence.text
        first_line = first_line or sentence.line
        words.extend(replace(w, start=w.start + shift, end=w.end + shift) for w in sentence.words)
        if len(words) >= words_each:
            docs.append(Sentence(text, words, first_line))
            text, words, first_line = "", [], 0
            if len(docs) == n_documents:
                return docs
    raise ValueError(f"EWT {split} holds fewer than {n_documents} documents of {words_each} words")
