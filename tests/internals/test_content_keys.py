"""Store keys follow the content: an overwritten checkpoint folder, an edited weight of a model
object or a replaced vectors file gives the new model's features, never the stored old ones.
Random twins are seeded explicitly and leave the caller's global RNG alone."""

from __future__ import annotations

import os

import pytest
import torch

import internals.content_hash as content_hash
from internals import SpanItem, load_subject, sites
from tests.tiny_models import random_bert

ITEMS = [
    SpanItem("The cat sat on the mat.", spans=((4, 7),)),
    SpanItem("A dog barked twice.", spans=((2, 5),)),
    SpanItem("Birds sing at dawn.", spans=((0, 5),)),
]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LINGPROBE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(content_hash, "_MEMORY", {})


def shifted_bert(tokenizer, shift: float):
    model = random_bert(tokenizer, layers=2, width=64)
    with torch.no_grad():
        for param in model.parameters():
            param.add_(shift)
    return model


def save(model, tokenizer, folder):
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def stored(subject, store):
    return subject.features(ITEMS, sites.every_layer(subject), store=store, progress=False)


def fresh(subject):
    return subject.features(ITEMS, sites.every_layer(subject), progress=False)


def test_checkpoint_overwritten_in_place_gives_the_new_features(minilm_tokenizer, tmp_path):
    folder, store = tmp_path / "ckpt", tmp_path / "store"
    save(shifted_bert(minilm_tokenizer, 0.0), minilm_tokenizer, folder)
    old = stored(load_subject(str(folder)), store)
    weights = folder / "model.safetensors"
    before = weights.stat()
    save(shifted_bert(minilm_tokenizer, 0.01), minilm_tokenizer, folder)
    # as `cp -p` or rsync would: the same size and the old modification time
    assert weights.stat().st_size == before.st_size
    os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))
    subject = load_subject(str(folder))
    new = stored(subject, store)
    assert torch.equal(new, fresh(subject))
    assert (new - old).abs().max() > 1e-3


def test_file_digest_is_remembered_by_stat(tmp_path, monkeypatch):
    path = tmp_path / "weights.bin"
    path.write_bytes(b"\x01" * 1000)
    calls = []
    real = content_hash.file_digest
    monkeypatch.setattr(content_hash, "file_digest", lambda p: calls.append(p) or real(p))
    first = content_hash.cached_file_digest(path)
    assert content_hash.cached_file_digest(path) == first
    monkeypatch.setattr(content_hash, "_MEMORY", {})  # a new process: the record on disk
    assert content_hash.cached_file_digest(path) == first
    assert len(calls) == 1
    path.write_bytes(b"\x02" * 1000)
    assert content_hash.cached_file_digest(path) != first
    assert len(calls) == 2


def test_trainer_state_does_not_change_a_folder_key(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    key = content_hash.folder_digest(tmp_path)
    (tmp_path / "optimizer.pt").write_bytes(b"state")
    assert content_hash.folder_digest(tmp_path) == key
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    assert content_hash.folder_digest(tmp_path) != key


@pytest.mark.parametrize("through_data", [False, True])
def test_editing_the_last_value_of_a_parameter_gives_the_new_features(
    minilm_tokenizer, tmp_path, through_data
):
    model = shifted_bert(minilm_tokenizer, 0.0)
    subject = load_subject(model, tokenizer=minilm_tokenizer)
    old = stored(subject, tmp_path)
    weight = model.encoder.layer[-1].output.dense.weight  # [64, 128]: the last value is 8191
    with torch.no_grad():
        (weight.data if through_data else weight).view(-1)[-1] += 1.0  # .data: no version bump
    new = stored(subject, tmp_path)
    assert torch.equal(new, fresh(subject))
    assert (new[:, -1] - old[:, -1]).abs().max() > 1e-3
    again = stored(load_subject(model, tokenizer=minilm_tokenizer), tmp_path)
    assert torch.equal(again, new)


def test_another_tokenizer_gives_another_key(minilm_tokenizer, sentencepiece_tokenizer):
    model = shifted_bert(minilm_tokenizer, 0.0)
    a = load_subject(model, tokenizer=minilm_tokenizer)
    b = load_subject(model, tokenizer=sentencepiece_tokenizer)
    assert a.content_key() != b.content_key()
    assert a.content_key() == load_subject(model, tokenizer=minilm_tokenizer).content_key()


def test_vectors_file_replaced_in_place_gives_the_new_features(tmp_path):
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("cat 1 0 0\ndog 0 1 0\nbird 0 0 1\n", encoding="utf-8")
    items = [SpanItem("cat and dog", spans=((0, 3),)), SpanItem("a bird", spans=((2, 6),))]
    first = load_subject(f"glove:{vectors}").features(items, store=tmp_path / "s", progress=False)
    vectors.write_text("cat 2 0 0\ndog 0 2 0\nbird 0 0 2\n", encoding="utf-8")
    second = load_subject(f"glove:{vectors}").features(items, store=tmp_path / "s", progress=False)
    assert torch.equal(second, 2 * first)


@pytest.mark.parametrize("scheme", ["xavier_uniform", "model"])
def test_random_twins_leave_the_global_rng_alone(minilm_tokenizer, tmp_path, scheme):
    folder = tmp_path / "ckpt"
    save(shifted_bert(minilm_tokenizer, 0.0), minilm_tokenizer, folder)
    model = shifted_bert(minilm_tokenizer, 0.0)
    twins = []
    with torch.random.fork_rng():  # the caller's state comes back after (tests/conftest.py)
        for global_seed in (123, 999):
            torch.manual_seed(global_seed)
            state = torch.get_rng_state()
            from_folder = load_subject(str(folder), init="random", seed=7, random_scheme=scheme)
            from_object = load_subject(
                model, tokenizer=minilm_tokenizer, init="random", seed=7, random_scheme=scheme
            )
            assert torch.equal(torch.get_rng_state(), state)
            twins.append((from_folder, from_object))
    for (a_folder, a_object), (b_folder, b_object) in [twins]:
        for a, b in ((a_folder, b_folder), (a_object, b_object)):
            for (name, p), q in zip(a.model.named_parameters(), b.model.parameters()):
                assert torch.equal(p, q), name
    other = load_subject(str(folder), init="random", seed=8, random_scheme=scheme)
    assert other.content_key() != twins[0][0].content_key()
