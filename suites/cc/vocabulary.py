"""The open-class vocabularies of the CC grammar, one per split (spec §1), read from a JSON file.

The shipped file `data/syntax_vocabulary.json` holds the paper's train and test lists (Appendix
Algorithms 1 and 2); pass another file with the same layout to replace them. Every word of a slot
must have the same number of words (e.g. every TEMP2 is two words): the feature-controlled
subsets condition on word positions, which must not depend on the lexical draw.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from suites.cc.errors import VocabularyError
from suites.datasets.errors import DataNotFoundError
from suites.errors import TaskError

Split = Literal["train", "test"]
SPLITS: tuple[Split, ...] = ("train", "test")
# The split-specific slots the grammar fills (spec §1 vocabulary table).
GRAMMAR_SLOTS = ("ADV", "NUM", "NOUN", "VERB", "PRON", "TEMP2", "UNDER2", "CANWORD", "KNOWNWORD")


@dataclass(frozen=True)
class SyntaxVocabulary:
    """Words per slot for one split; `slots` maps a slot name to its words, in file order."""

    split: str
    slots: tuple[tuple[str, tuple[str, ...]], ...]

    def words(self, slot: str) -> tuple[str, ...]:
        """The words of `slot` (a KeyError names the slots there are)."""
        for name, words in self.slots:
            if name == slot:
                return words
        raise TaskError(f"slot {slot!r} is not in the {self.split} vocabulary; it has {self.names}")

    @property
    def names(self) -> tuple[str, ...]:
        """Slot names, in file order (grammar slots and any extra ones such as CITY)."""
        return tuple(name for name, _ in self.slots)

    def word_count(self, slot: str) -> int:
        """Whitespace-separated words in every entry of `slot` (validated to be equal)."""
        return len(self.words(slot)[0].split())


def default_vocabulary_path() -> Path:
    """The shipped vocabulary file (the paper's lists)."""
    return Path(str(resources.files("suites.cc") / "data" / "syntax_vocabulary.json"))


def load_syntax_vocabulary(split: str, path: str | Path | None = None) -> SyntaxVocabulary:
    """The vocabulary of `split` ("train" or "test") from `path` (default: the shipped file)."""
    if split not in SPLITS:
        raise VocabularyError(f"split={split!r}; choose 'train' or 'test'")
    source = Path(path) if path is not None else default_vocabulary_path()
    if not source.is_file():
        raise DataNotFoundError(f"vocabulary file {source} does not exist; pass an existing JSON")
    try:
        payload = json.loads(source.read_text())
    except json.JSONDecodeError as error:
        raise VocabularyError(f"{source} is not valid JSON ({error}); fix the file") from error
    if not isinstance(payload, dict) or not isinstance(payload.get(split), dict):
        raise VocabularyError(
            f'{source} has no object {split!r}; write {{"train": {{SLOT: [words]}}, "test": ...}}'
        )
    table = payload[split]
    missing = [slot for slot in GRAMMAR_SLOTS if slot not in table]
    if missing:
        raise VocabularyError(f"{source}: the {split} vocabulary lacks slots {missing}; add them")
    slots = tuple(
        (slot, _checked_words(source, split, slot, words))
        for slot, words in table.items()
        if not slot.startswith("_")
    )
    return SyntaxVocabulary(split, slots)


def _checked_words(source: Path, split: str, slot: str, words: object) -> tuple[str, ...]:
    if not isinstance(words, list) or not words or not all(isinstance(w, str) for w in words):
        raise VocabularyError(f"{source}: {split}.{slot} must be a non-empty list of strings")
    cleaned = tuple(" ".join(w.split()) for w in words)
    counts = {w: len(w.split()) for w in cleaned}
    if min(counts.values()) == 0:
        raise VocabularyError(f"{source}: {split}.{slot} holds an empty word; remove it")
    if slot in GRAMMAR_SLOTS and len(set(counts.values())) > 1:
        raise VocabularyError(
            f"{source}: {split}.{slot} mixes word counts {counts}; every entry of a slot needs the"
            " same number of words (word positions are features)"
        )
    return cleaned
