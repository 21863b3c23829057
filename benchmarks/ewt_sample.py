"""Benchmark inputs from UD English EWT: sentences, one item per word, and long documents.

From the shipped EWT sample (3,000 train, 800 dev sentences) when that is enough, else the full
treebank through the dataset registry (`$LINGPROBE_DATA`, the cache, or a download); benchmarks
that need it are skipped with a message when it cannot be had.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from internals import SpanItem
from suites.datasets import DataError, DataSource
from suites.readers.conllu import Sentence, read_sentences

SAMPLE_SENTENCES = {"dev": 800, "train": 3000}


def ewt_path(split: str = "dev", n: int | None = None) -> Path:
    """The treebank file of `split` holding at least `n` sentences (all with None), or a skip."""
    if n is not None and n <= SAMPLE_SENTENCES[split]:
        return DataSource(samples=True).path("ud-english-ewt", split)
    try:
        return DataSource().path("ud-english-ewt", split)
    except DataError as error:
        pytest.skip(f"UD English EWT not available ({error}); set LINGPROBE_DATA=/path/to/data")


def sentences(n: int | None, split: str = "dev") -> list[Sentence]:
    """The first `n` sentences (all with None): text and words with character spans."""
    out = []
    for sentence in read_sentences(ewt_path(split, n)):
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
