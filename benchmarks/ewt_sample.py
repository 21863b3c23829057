"""Benchmark inputs: the first N sentences of UD English EWT dev, one item per word."""

from __future__ import annotations

from pathlib import Path

from internals import SpanItem
from suites.edge.conllu import read_sentences

EWT_DEV = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "ud_english_ewt"
    / "en_ewt-ud-dev.conllu"
)


def sentences(n: int) -> list:
    """The first `n` sentences (text and words with character spans)."""
    out = []
    for sentence in read_sentences(EWT_DEV):
        out.append(sentence)
        if len(out) == n:
            break
    return out


def word_items(n: int) -> list[SpanItem]:
    """One SpanItem per word of the first `n` sentences (the shape of a UPOS task)."""
    return [SpanItem(s.text, spans=((w.start, w.end),)) for s in sentences(n) for w in s.words]
