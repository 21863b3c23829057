"""Rows shared between item lists through the store: a list whose (text, span) segments another
list already stored reads them instead of running the model, bit for bit; anything not stored
the same way (other pooling, dtype, sites, a damaged shard or record) is computed."""

from __future__ import annotations

import itertools
import logging

import pytest
import torch

from internals import ItemError, SpanItem, load_subject, sites, span_reuse

SENTENCES = [
    "The cat sat on the mat .",
    "A dog barked at the old postman today .",
    "Birds sing .",
    "She reads long books slowly .",
]


def words(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for word in text.split(" "):
        spans.append((start, start + len(word)))
        start += len(word) + 1
    return spans


WORDS = [SpanItem(t, spans=(s,)) for t in SENTENCES for s in words(t)]
PAIRS = [SpanItem(t, spans=(a, b)) for t in SENTENCES for a, b in itertools.pairwise(words(t))]


class Counter:
    """Wraps `subject.compute`, counting the items it is asked to compute."""

    def __init__(self, subject):
        self.inner, self.items = subject.compute, 0

    def __call__(self, items, *args, **kwargs):
        self.items += len(items)
        return self.inner(items, *args, **kwargs)


@pytest.fixture
def counted(monkeypatch):
    def install(subject):
        counter = Counter(subject)
        monkeypatch.setattr(subject, "compute", counter)
        return counter

    return install


def feats(subject, items, store, **kwargs):
    return subject.features(items, store=store, shard_size=8, progress=False, **kwargs)


def test_pairs_after_words_read_the_words_rows_bit_for_bit(minilm, counted, tmp_path):
    layers = sites.every_layer(minilm)
    word_rows = feats(minilm, WORDS, tmp_path, sites=layers)
    fresh = minilm.features(PAIRS, sites=layers, progress=False)
    counter = counted(minilm)
    pairs = feats(minilm, PAIRS, tmp_path, sites=layers)
    assert counter.items == 0  # no forward pass: every span was stored under the word list
    row = {(item.text, item.spans[0]): k for k, item in enumerate(WORDS)}
    d = minilm.dim
    for k, item in enumerate(PAIRS):
        for j, span in enumerate(item.spans):
            assert torch.equal(pairs[k, :, j * d : (j + 1) * d], word_rows[row[(item.text, span)]])
    torch.testing.assert_close(pairs, fresh, rtol=1e-5, atol=1e-5)  # batch rounding at most
    assert torch.equal(feats(minilm, PAIRS, tmp_path, sites=layers), pairs)  # a rerun: the same
    assert counter.items == 0


def test_items_with_new_spans_are_computed_the_rest_read(counted, tmp_path):
    glove = load_subject("glove:6B.50d")
    feats(glove, WORDS[:10], tmp_path)
    counter = counted(glove)
    out = feats(glove, WORDS, tmp_path)
    assert counter.items == len(WORDS) - 10
    assert torch.equal(out, glove.features(WORDS, progress=False))
    counter.items = 0
    assert torch.equal(feats(glove, WORDS, tmp_path), out)  # saved where anything was computed
    assert counter.items == 0


def test_whole_texts_and_text_pairs_are_found_too(counted, tmp_path):
    glove = load_subject("glove:6B.50d")
    feats(glove, [SpanItem(t) for t in SENTENCES], tmp_path)
    counter = counted(glove)
    pairs = [SpanItem(a, text_pair=b) for a, b in itertools.pairwise(SENTENCES)]
    out = feats(glove, pairs, tmp_path)
    assert counter.items == 0
    assert torch.equal(out, glove.features(pairs, progress=False))


@pytest.mark.parametrize(
    "other",
    [{"pool": "max"}, {"store_dtype": torch.float16}, {"sites": "all"}],
    ids=["pooling", "dtype", "more-sites"],
)
def test_rows_read_another_way_are_not_served(minilm, counted, tmp_path, other):
    feats(minilm, WORDS, tmp_path, sites=sites.last(minilm))
    counter = counted(minilm)
    options = {"sites": sites.last(minilm), **other}
    out = feats(minilm, PAIRS, tmp_path, **options)
    assert counter.items == len(PAIRS)
    fresh = minilm.features(PAIRS, progress=False, **options)
    torch.testing.assert_close(out, fresh, rtol=1e-2, atol=1e-2)


def test_a_damaged_source_shard_is_deleted_and_its_items_computed(counted, tmp_path, caplog):
    glove = load_subject("glove:6B.50d")
    feats(glove, WORDS, tmp_path)
    shard = sorted(tmp_path.rglob("shard-000000.safetensors"))[0]
    data = bytearray(shard.read_bytes())
    data[-5] ^= 0xFF
    shard.write_bytes(bytes(data))
    counter = counted(glove)
    with caplog.at_level(logging.WARNING, logger="internals.store"):
        out = feats(glove, PAIRS, tmp_path)
    assert "is damaged" in caplog.text and not shard.exists()
    assert 0 < counter.items < len(PAIRS)  # the pairs of the first 8 words' sentences
    assert torch.equal(out, glove.features(PAIRS, progress=False))


def test_a_damaged_segments_record_is_ignored(counted, tmp_path, caplog, monkeypatch):
    glove = load_subject("glove:6B.50d")
    feats(glove, WORDS, tmp_path)
    record = next(tmp_path.rglob("segments.safetensors"))
    record.write_bytes(record.read_bytes()[:-7])
    monkeypatch.setattr(span_reuse, "_INDEXES", {})  # a later run: records are read anew
    counter = counted(glove)
    with caplog.at_level(logging.WARNING, logger="internals.segments"):
        out = feats(glove, PAIRS, tmp_path)
    assert "is damaged" in caplog.text
    assert counter.items == len(PAIRS)
    assert torch.equal(out, glove.features(PAIRS, progress=False))


def test_an_item_error_names_the_item_of_the_whole_list(minilm, tmp_path):
    feats(minilm, WORDS, tmp_path, sites=sites.last(minilm))
    long_text = " ".join(["word"] * 600)
    items = [*PAIRS[:5], SpanItem(long_text, spans=((0, 4), (5, 9))), *PAIRS[5:]]
    with pytest.raises(ItemError, match="item 5"):
        feats(minilm, items, tmp_path, sites=sites.last(minilm), long_texts="error")
