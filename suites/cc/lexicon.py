"""The semantic test's words: adjective/antonym comparative pairs and names (replaceable files).

`data/adjective_pairs.tsv` (columns `comparative`, `antonym`) and `data/names.txt` (one name a
line) ship with the package; the paper used 20 pairs whose comparatives are single tokens for its
tokenizer and 33 common names (§4.1.3). `single_token_pairs` keeps the pairs whose two
comparatives are one token each for a given tokenizer, in the form they take inside a sentence
(after a space: `Ġfaster` for byte-level BPE, `faster` for WordPiece), and reports the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import polars as pl

from suites.cc.errors import VocabularyError
from suites.datasets.errors import DataNotFoundError

CONTEXT = "He is"  # a filler is tokenised as it appears in the schemata: after "is" and a space


@dataclass(frozen=True)
class AdjectivePair:
    """A comparative and its antonym's comparative, e.g. ("stronger", "weaker")."""

    comparative: str
    antonym: str


def _data_file(name: str) -> Path:
    return Path(str(resources.files("suites.cc") / "data" / name))


def load_adjective_pairs(path: str | Path | None = None) -> list[AdjectivePair]:
    """Pairs from a TSV with header `comparative<TAB>antonym` (default: the shipped file)."""
    source = Path(path) if path is not None else _data_file("adjective_pairs.tsv")
    if not source.is_file():
        raise DataNotFoundError(f"adjective-pair file {source} does not exist")
    frame = pl.read_csv(source, separator="\t", infer_schema_length=0)
    if frame.columns[:2] != ["comparative", "antonym"]:
        raise VocabularyError(
            f"{source}: header is {frame.columns}; it must start with comparative<TAB>antonym"
        )
    pairs = []
    for row, (word, antonym) in enumerate(frame.select("comparative", "antonym").iter_rows()):
        if not word or not antonym or len(word.split()) != 1 or len(antonym.split()) != 1:
            raise VocabularyError(
                f"{source}, row {row + 1}: give one word per column, got {word!r} / {antonym!r}"
            )
        pairs.append(AdjectivePair(word.strip(), antonym.strip()))
    words = [w for p in pairs for w in (p.comparative, p.antonym)]
    repeated = sorted({w for w in words if words.count(w) > 1})
    if repeated:
        raise VocabularyError(f"{source}: {repeated} occur in several pairs; use each word once")
    return pairs


def load_names(path: str | Path | None = None) -> list[str]:
    """Names, one a line (default: the shipped 33); blank lines and `#` comments are skipped."""
    source = Path(path) if path is not None else _data_file("names.txt")
    if not source.is_file():
        raise DataNotFoundError(f"name file {source} does not exist")
    names = [line.strip() for line in source.read_text().splitlines()]
    names = [n for n in names if n and not n.startswith("#")]
    if len(set(names)) != len(names):
        raise VocabularyError(f"{source}: names repeat; list each name once")
    return names


def filler_token_id(tokenizer: Any, word: str) -> int | None:
    """The single token id of `word` as it follows a space in a sentence, or None if it splits."""
    before = tokenizer(CONTEXT, add_special_tokens=False)["input_ids"]
    after = tokenizer(f"{CONTEXT} {word}", add_special_tokens=False)["input_ids"]
    if len(after) != len(before) + 1 or after[: len(before)] != before:
        return None
    return int(after[-1])


def single_token_pairs(
    pairs: list[AdjectivePair], tokenizer: Any
) -> tuple[list[AdjectivePair], pl.DataFrame]:
    """(pairs whose comparatives are both single tokens, table of the dropped pairs and why)."""
    kept, dropped = [], []
    for pair in pairs:
        split = [
            w for w in (pair.comparative, pair.antonym) if filler_token_id(tokenizer, w) is None
        ]
        if split:
            pieces = {w: tokenizer.tokenize(f" {w}") for w in split}
            dropped.append(
                {
                    "comparative": pair.comparative,
                    "antonym": pair.antonym,
                    "reason": "; ".join(f"{w} -> {pieces[w]}" for w in split),
                }
            )
        else:
            kept.append(pair)
    schema = {"comparative": pl.String, "antonym": pl.String, "reason": pl.String}
    return kept, pl.DataFrame(dropped, schema=schema)
