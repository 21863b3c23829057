"""Benchmark inputs: the first N sentences of UD English EWT dev, one item per word.

Read from the shipped EWT sample (800 dev sentences) when that is enough, else from the full
treebank through the dataset registry (`$LINGPROBE_DATA` or the cache; fetched once).
"""

from __future__ import annotations

from pathlib import Path

from internals import SpanItem
from suites.datasets import DataSource
from suites.edge.conllu import read_sentences

SAMPLE_DEV_SENTENCES = 800


def ewt_dev(n: int) -> Path:
    """The EWT dev file holding at least `n` sentences."""
    return DataSource(samples=n <= SAMPLE_DEV_SENTENCES).path("ud-english-ewt", "dev")


def sentences(n: int) -> list:
    """The first `n` sentences (text and words with character spans)."""
    out = []
    for sentence in read_sentences(ewt_dev(n)):
        out.append(sentence)
        if len(out) == n:
            break
    return out


def word_items(n: int) -> list[SpanItem]:
    """One SpanItem per word of the first `n` sentences (the shape of a UPOS task)."""
    return [SpanItem(s.text, spans=((w.start, w.end),)) for s in sentences(n) for w in s.words]
