"""UD treebanks for structural probing: one span item per word, gold trees, UPOS per word.

Sentences come from `suites.readers.conllu.read_sentences` (multi-word tokens split into their
words, empty nodes dropped). A word is pooled from its character span in the sentence text, so a
model reads each sentence once for all its words. Punctuation, which the paper leaves out of the
spanning trees and the root prediction, is UPOS `PUNCT` by default, or the PTB XPOS tags the
reference reporter lists (`''` `,` `.` `:` ``` `` ``` `-LRB-` `-RRB-`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch

from internals import SpanItem
from probes import TreeError
from probes.structural import SentenceTrees
from suites.readers.conllu import Sentence, read_sentences
from suites.tasks import TaskError

Punctuation = Literal["upos", "ptb_xpos"]
PTB_PUNCT = frozenset({"''", ",", ".", ":", "``", "-LRB-", "-RRB-"})  # reporter.py


@dataclass(frozen=True)
class Treebank:
    """Sentences as word items (`items[i]` is word i of `trees`) with their gold trees."""

    name: str
    sentences: tuple[Sentence, ...]
    trees: SentenceTrees
    items: tuple[SpanItem, ...]
    upos: tuple[str, ...]

    @property
    def texts(self) -> list[str]:
        """The sentence texts."""
        return [s.text for s in self.sentences]

    def __len__(self) -> int:
        return len(self.sentences)


def read_treebank(
    path: str | Path,
    *,
    limit_sentences: int | None = None,
    skip_sentences: int = 0,
    punctuation: Punctuation = "upos",
) -> Treebank:
    """Sentences `skip_sentences ..` (at most `limit_sentences`) of a CoNLL-U file."""
    if punctuation not in ("upos", "ptb_xpos"):
        raise TaskError(f"punctuation={punctuation!r}; choose 'upos' or 'ptb_xpos'")
    chosen: list[Sentence] = []
    for number, sentence in enumerate(read_sentences(path)):
        if number < skip_sentences:
            continue
        if limit_sentences is not None and len(chosen) >= limit_sentences:
            break
        chosen.append(sentence)
    if not chosen:
        raise TaskError(f"{path}: no sentences after skipping {skip_sentences}")
    marks = {
        (s, w.index)
        for s, sent in enumerate(chosen)
        for w in sent.words
        if (w.upos == "PUNCT" if punctuation == "upos" else w.xpos in PTB_PUNCT)
    }
    return from_sentences(Path(path).stem, chosen, frozenset(marks), source=path)


def from_sentences(
    name: str,
    sentences: Sequence[Sentence],
    punct: frozenset[tuple[int, int]],
    *,
    source: str | Path | None = None,
) -> Treebank:
    """A treebank of `sentences`; `punct` holds the (sentence, word index) pairs to leave out.
    `source` (the file, default `name`) names the file and line of a sentence that is not a
    dependency tree."""
    where = source if source is not None else name
    lengths, heads, flags, items, upos = [], [], [], [], []
    for s, sentence in enumerate(sentences):
        ids = [w.index for w in sentence.words]
        if ids != list(range(1, len(ids) + 1)) or any(w.head < 0 for w in sentence.words):
            raise TaskError(
                f"{where}:{sentence.line}: words must be numbered 1..n with numeric heads;"
                " this sentence is not a plain dependency tree"
            )
        lengths.append(len(ids))
        for word in sentence.words:
            heads.append(word.head)
            flags.append((s, word.index) in punct)
            items.append(SpanItem(sentence.text, ((word.start, word.end),)))
            upos.append(word.upos)
    try:
        trees = SentenceTrees(torch.tensor(lengths), torch.tensor(heads), torch.tensor(flags))
    except TreeError as error:
        line = sentences[error.sentence].line
        raise TaskError(
            f"{where}:{line}: the sentence starting on this line is not a dependency tree: it"
            f" {error.problem}; fix its HEAD column"
        ) from None
    return Treebank(name, tuple(sentences), trees, tuple(items), tuple(upos))


def concatenate(*banks: Treebank) -> tuple[list[SpanItem], SentenceTrees, torch.Tensor]:
    """Items, trees and per-sentence split codes (0, 1, 2, ... by position) of several banks."""
    items = [item for bank in banks for item in bank.items]
    trees = SentenceTrees(
        torch.cat([b.trees.lengths for b in banks]),
        torch.cat([b.trees.heads for b in banks]),
        torch.cat([b.trees.punct for b in banks]),
    )
    codes = torch.cat([torch.full((len(b),), i, dtype=torch.long) for i, b in enumerate(banks)])
    return items, trees, codes
