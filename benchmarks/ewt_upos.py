"""Real probe inputs for the probes benchmarks: MiniLM word features of UD English EWT (UPOS).

Read only through `LINGPROBE_DATA` (the folder holding `ud_english_ewt/`); without it a
benchmark that needs real features is skipped with a message saying so. Features are cached in
an activation store (`LINGPROBE_BENCH_STORE`, default `~/.cache/lingprobe/bench-store`), so only
the first run pays for the extraction. Not a benchmark itself (no tests).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from torch import Tensor

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


@dataclass
class RealUpos:
    """Features `[item, site, dim]` (float32, every layer), UPOS class ids, word keys."""

    feats: Tensor
    labels: Tensor
    keys: list[str]
    n_sentences: int


def ewt_train_path() -> Path:
    """EWT train under `$LINGPROBE_DATA`, or skip the calling benchmark with the reason."""
    root = os.environ.get("LINGPROBE_DATA")
    if not root:
        pytest.skip(
            "real-feature benchmark: set LINGPROBE_DATA to the data folder (ud_english_ewt/)"
        )
    path = Path(root) / "ud_english_ewt" / "en_ewt-ud-train.conllu"
    if not path.exists():
        pytest.skip(f"real-feature benchmark: {path} does not exist (check LINGPROBE_DATA)")
    return path


def store_dir() -> Path:
    """Where the benchmark features are cached."""
    default = Path.home() / ".cache" / "lingprobe" / "bench-store"
    return Path(os.environ.get("LINGPROBE_BENCH_STORE", default))


def minilm_upos(n_sentences: int = 800, init: str = "pretrained") -> RealUpos:
    """MiniLM features at every layer (7 sites x 384) of the words of the first `n_sentences`
    EWT train sentences, mean-pooled over sub-words, with their UPOS tags (17 classes)."""
    from internals import load_subject
    from suites.readers.conllu import read_conllu

    task = read_conllu(ewt_train_path(), "upos", split="train", limit_sentences=n_sentences)
    subject = load_subject(MINILM, init=init)
    feats = subject.features(task.items(), store=store_dir(), progress=False)
    labels = task.targets.to(torch.int64)
    return RealUpos(feats, labels, task.keys, n_sentences)
