"""One row of the bad-input table: what is done wrong, what the user gets, and the check.

A case either raises `error` whose one-line message matches `match`, or (with `error=None`)
completes: its `run` asserts the recovery itself (a recomputed shard, the new model's features)
and `warns`, when given, must be emitted with a message matching `match`. `typed` cases pass a
value of the wrong type: the test run's beartype hook rejects those before lingprobe sees them,
so they are checked in a plain interpreter, as users run lingprobe.
"""

from __future__ import annotations

import logging
import re
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Case:
    """A bad input or a damage, the behaviour it gets, and the code that shows it."""

    id: str
    what: str
    expect: str
    run: Callable[[Env], object]
    error: type[BaseException] | None
    match: str
    warns: type[Warning] | None = None
    typed: bool = False


class Env:
    """Lazily built inputs shared by the cases: folders, tiny models, a vectors subject."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0

    def tmp(self) -> Path:
        """A fresh empty folder."""
        self.count += 1
        folder = self.root / f"case-{self.count}"
        folder.mkdir(parents=True)
        return folder

    @cached_property
    def tokenizer(self) -> Any:
        from transformers import AutoTokenizer

        from internals.packaged import MINILM, packaged_path

        return AutoTokenizer.from_pretrained(packaged_path(MINILM))

    def bert_model(self) -> Any:
        from tests.tiny_models import random_bert

        return random_bert(self.tokenizer, layers=2, width=64)

    @cached_property
    def bert_folder(self) -> Path:
        folder = self.root / "bert"
        self.bert_model().save_pretrained(folder)
        self.tokenizer.save_pretrained(folder)
        return folder

    @cached_property
    def bert(self) -> Any:
        from internals import load_subject

        return load_subject(str(self.bert_folder))

    @cached_property
    def vectors_file(self) -> Path:
        path = self.root / "vectors.txt"
        words = ["the", "cat", "sat", "dog", "a", "barked", "on", "mat", "."]
        rows = [
            f"{w} " + " ".join(f"{(i + j) % 5 / 4:.2f}" for j in range(4))
            for i, w in enumerate(words)
        ]
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        return path

    @cached_property
    def static(self) -> Any:
        from internals import load_subject

        return load_subject(f"glove:{self.vectors_file}")


@contextmanager
def store_log() -> Iterator[list[str]]:
    """The messages `internals.store` logs meanwhile."""
    messages: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage())

    logger, handler = logging.getLogger("internals.store"), Collect(logging.INFO)
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        yield messages
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def check(case: Case, env: Env) -> None:
    """Run `case` and raise AssertionError when the behaviour is not the one in the table."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            case.run(env)
        except Exception as error:
            if case.error is None or not isinstance(error, case.error):
                raise AssertionError(
                    f"{case.id}: expected {case.expect}, got {type(error).__name__}: {error}"
                ) from error
            message = str(error)
            assert "\n" not in message, f"{case.id}: the message is not one line: {message!r}"
            assert re.search(case.match, message), (
                f"{case.id}: message {message!r} does not match {case.match!r}"
            )
            return
    assert case.error is None, f"{case.id}: no {case.error.__name__} was raised"
    if case.warns is not None:
        found = [w for w in caught if issubclass(w.category, case.warns)]
        assert any(re.search(case.match, str(w.message)) for w in found), (
            f"{case.id}: no {case.warns.__name__} matching {case.match!r}; got"
            f" {[str(w.message) for w in caught]}"
        )


def run_plain(cases: list[Case]) -> dict[str, str]:
    """Check `cases` here; return {case id: '' when right, else the failure}."""
    outcome = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = Env(Path(tmp))
        for case in cases:
            try:
                check(case, env)
                outcome[case.id] = ""
            except AssertionError as failure:
                outcome[case.id] = str(failure)[:2000]
    return outcome
