"""The structural suite's three treebanks from its config: train, dev (the sentences after train
in the train file) and test."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from suites.datasets import DataSource, resolve_file
from suites.datasets.references import dataset_label
from suites.structural.config import StructuralSuiteConfig
from suites.structural.data import Treebank, read_treebank


@dataclass(frozen=True)
class Banks:
    """Train, dev and test treebanks, the files they came from and the dataset's name."""

    train: Treebank
    dev: Treebank
    test: Treebank
    files: tuple[Path, ...]
    dataset: str


def read_banks(config: StructuralSuiteConfig, data: DataSource | str | Path | None) -> Banks:
    """Train: the first `train_sentences` of the train file (None: all but the dev part); dev:
    the next `dev_sentences`; test: the first `test_sentences` of the test file."""
    train_cap, test_cap = config.caps()
    train_file = resolve_file(config.train_file, data, what="train_file")
    test_file = resolve_file(config.test_file, data, what="test_file")
    n_dev = config.dev_sentences
    if train_cap is None:
        total = len(read_treebank(train_file))
        train_cap = max(1, total - n_dev)
    train = read_treebank(train_file, limit_sentences=train_cap)
    dev = read_treebank(train_file, limit_sentences=n_dev, skip_sentences=len(train))
    test = read_treebank(test_file, limit_sentences=test_cap)
    return Banks(train, dev, test, (train_file, test_file), dataset_label(config.train_file))
