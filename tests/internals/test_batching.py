"""The token-budget batcher: same features as fixed batches, fewer padded tokens, OOM back-off."""

from __future__ import annotations

import logging
import random

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from internals import SpanItem, load_subject, sites
from internals.batching import budget_batches, length_buckets, padded_tokens
from internals.errors import ExtractionMemoryError
from internals.progress import ProgressBar, ProgressStep
from tests.internals.test_equivalence import ITEMS
from tests.internals.test_windows import WORDS
from tests.tiny_models import random_bert

TOL = {"rtol": 1e-5, "atol": 1e-5}


def assert_equal_to_rounding(got, want, tol: float = 1e-5):
    """Equal up to float32 rounding: within `tol` of each site's largest magnitude.

    Other batch shapes change the order of float32 sums in the matmuls, so values differ in the
    last bits; SmolLM2's late layers reach magnitudes in the hundreds.
    """
    scale = want.abs().amax(dim=(0, 2))
    error = (got - want).abs().amax(dim=(0, 2))
    assert bool((error <= tol * scale).all()), (error / scale).max()


def sentence_items(n: int, seed: int = 0) -> list[SpanItem]:
    """`n` sentences of 3 to 60 words, each item the sentence's third word."""
    rng = random.Random(seed)
    items = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(3, 60))]
        start = len(words[0]) + len(words[1]) + 2
        items.append(SpanItem(" ".join(words) + ".", spans=((start, start + len(words[2])),)))
    return items


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 700), min_size=1, max_size=400),
    budget=st.integers(16, 20000),
)
def test_budget_batches_hold_every_row_once_within_the_budget(lengths, budget):
    batches = budget_batches(lengths, budget)
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) == 1 or padded_tokens(lengths, batch) <= budget


def extract(subject, items, batch_size):
    """Features at every layer and the padded and real tokens run (through the callback)."""
    steps: list[ProgressStep] = []
    old = subject.batch_size
    subject.batch_size = batch_size
    try:
        got = subject.features(items, sites.every_layer(subject), progress=steps.append)
    finally:
        subject.batch_size = old
    assert sum(s.items for s in steps) == len(items)
    return got, sum(s.padded_tokens for s in steps), sum(s.real_tokens for s in steps)


def check_budget_against_fixed(subject, items):
    fixed, fixed_padded, real = extract(subject, items, batch_size=64)
    budget, budget_padded, real_again = extract(subject, items, batch_size=None)
    assert_equal_to_rounding(budget, fixed)
    assert real == real_again
    assert real <= budget_padded < fixed_padded
    return fixed_padded / real, budget_padded / real


@pytest.mark.slow
def test_token_budget_equals_fixed_batches_on_minilm_with_fewer_padded_tokens(minilm):
    check_budget_against_fixed(minilm, sentence_items(200))


@pytest.mark.slow
@pytest.mark.parametrize("side", ["left", "right"])
def test_token_budget_equals_fixed_batches_on_smollm2(smollm2_dir, side):
    subject = load_subject(str(smollm2_dir), padding_side=side)
    check_budget_against_fixed(subject, sentence_items(40))


@pytest.fixture
def tiny_bert(minilm_tokenizer):
    model = random_bert(minilm_tokenizer, layers=2, width=32)
    return load_subject(model, tokenizer=minilm_tokenizer)


def test_out_of_memory_in_the_forward_halves_the_batch_and_finishes(tiny_bert, caplog):
    every = sites.every_layer(tiny_bert)
    want = tiny_bert.features(ITEMS, every, progress=False)
    calls = []

    def fail_first(module, args):  # the fake allocator error, raised inside the traced forward
        calls.append(len(args[0]) if args else 0)
        if len(calls) == 1:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB (fake)")

    handle = tiny_bert.model.encoder.layer[1].register_forward_pre_hook(fail_first)
    budget = tiny_bert.batch_tokens
    try:
        with caplog.at_level(logging.WARNING, logger="internals.batch_runner"):
            got = tiny_bert.features(ITEMS, every, progress=False)
    finally:
        handle.remove()
    torch.testing.assert_close(got, want, **TOL)  # other batch shapes: float32 rounding only
    assert len(calls) == 3  # the failed batch, then its two halves
    assert "out of memory on a batch of 7 rows" in caplog.text
    assert tiny_bert.batch_tokens < budget  # later calls start from what fitted


def test_out_of_memory_from_the_backend_is_retried(tiny_bert, monkeypatch):
    every = sites.every_layer(tiny_bert)
    want = tiny_bert.features(ITEMS, every, progress=False)
    inner, sizes = tiny_bert.backend.pooled, []

    def flaky(batch, chosen, how):
        sizes.append(int(batch.inputs["input_ids"].shape[0]))
        if len(sizes) == 1:
            raise torch.OutOfMemoryError("CUDA out of memory (fake)")
        return inner(batch, chosen, how)

    monkeypatch.setattr(tiny_bert.backend, "pooled", flaky)
    torch.testing.assert_close(tiny_bert.features(ITEMS, every, progress=False), want)
    assert sizes == [7, 4, 3]


def test_a_single_row_that_never_fits_is_a_clear_error(tiny_bert, monkeypatch):
    def never(batch, chosen, how):
        raise torch.OutOfMemoryError("CUDA out of memory (fake)")

    monkeypatch.setattr(tiny_bert.backend, "pooled", never)
    with pytest.raises(ExtractionMemoryError, match="does not fit in memory even alone"):
        tiny_bert.features(ITEMS[:2], progress=False)


def test_fixed_batches_still_cap_rows_and_tokens():
    lengths = [5, 50, 7, 300, 12]
    batches = list(length_buckets(lengths, 2, 400))
    assert [b.tolist() for b in batches] == [[3], [1, 4], [2, 0]]


def test_progress_bar_counts_items_and_shows_padding_waste():
    with ProgressBar(10, "features test", enabled=True) as bar:
        bar(ProgressStep(4, real_tokens=100, padded_tokens=110))
        bar(ProgressStep(6, real_tokens=100, padded_tokens=100))
        assert bar.bar.n == 10 and bar.bar.unit == "item"
        assert "padded/real tokens 1.050" in str(bar.bar.postfix)


def test_batch_options_reach_the_subject_and_bad_ones_are_refused(minilm_tokenizer):
    model = random_bert(minilm_tokenizer, layers=1, width=32)
    subject = load_subject(model, tokenizer=minilm_tokenizer, batch_tokens=512, batch_size=None)
    assert subject.batch_tokens == 512 and subject.batch_size is None
    with pytest.raises(ValueError, match="batch_tokens=0"):
        load_subject(model, tokenizer=minilm_tokenizer, batch_tokens=0)
    with pytest.raises(ValueError, match="batch_size=-2"):
        load_subject(model, tokenizer=minilm_tokenizer, batch_size=-2)
