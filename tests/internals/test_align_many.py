"""`align_many` (every text at once) against `align_text` (one text at a time)."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from internals.align import align_many, align_text, encode_texts
from internals.errors import ItemError


@st.composite
def tokenized(draw):
    """A text, arbitrary token offsets (unordered, overlapping, past the end, empty) with
    special flags, and spans (none: the whole text)."""
    text = draw(st.text(alphabet="ab \t\u3000", max_size=12))
    n = len(text)
    pairs = st.tuples(st.integers(0, n + 2), st.integers(0, n + 2)).map(sorted).map(tuple)
    offsets = draw(st.lists(pairs, max_size=10))
    special = draw(st.lists(st.integers(0, 1), min_size=len(offsets), max_size=len(offsets)))
    spans: list[tuple[int, int]] = []
    if n:
        bounds = st.tuples(st.integers(-1, n - 1), st.integers(1, n + 1)).filter(
            lambda b: b[0] < b[1]
        )
        spans = draw(st.lists(bounds, max_size=4))
    return text, spans, offsets, special


def trimmed(text: str, a: int, b: int) -> tuple[int, int]:
    a, b = min(max(a, 0), len(text)), min(max(b, 0), len(text))
    while a < len(text) and text[a].isspace():
        a += 1
    while b > 0 and text[b - 1].isspace():
        b -= 1
    return a, max(a, b)


def in_order(text: str, offsets: list[tuple[int, int]], special: list[int]) -> bool:
    ranges = [trimmed(text, a, b) for (a, b), s in zip(offsets, special) if not s]
    ranges = [(a, b) for a, b in ranges if b > a]
    return all(x[0] <= y[0] and x[1] <= y[1] for x, y in pairwise(ranges))


@settings(max_examples=300, deadline=None)
@given(st.lists(tokenized(), min_size=1, max_size=6))
def test_every_text_at_once_equals_one_at_a_time(batch):
    texts, spans, offsets, special = (list(column) for column in zip(*batch))
    many = align_many(texts, spans, offsets, special)
    assert len(many) == len(texts)
    for k, got in enumerate(many):
        try:
            alone = align_text(
                texts[k], spans[k], offsets[k], special[k], item_index=k, field="text"
            )
        except ItemError:
            assert got is None  # left to align_text, which raises
            continue
        if got is None:  # only a text whose tokens are out of order (or spans outside it) is left
            outside = any(a < 0 or b > len(texts[k]) for a, b in spans[k])
            assert outside or not in_order(texts[k], offsets[k], special[k])
            continue
        assert [a.tolist() for a in got] == [a.tolist() for a in alone]


@pytest.mark.parametrize("tokenizer_name", ["minilm_tokenizer", "bpe_tokenizer"])
def test_real_tokenizations_of_several_texts(request, tokenizer_name):
    tokenizer = request.getfixturevalue(tokenizer_name)
    texts = ["The cat sat.", "  Leading  space", "東京 is big", "a", "x  y\tz "]
    spans = [((4, 7), (0, 3), (4, 12)), ((2, 9),), ((0, 2), (3, 5)), (), ((0, 1), (3, 6))]
    enc = tokenizer(texts, return_offsets_mapping=True, return_special_tokens_mask=True)
    offsets, special = enc["offset_mapping"], enc["special_tokens_mask"]
    many = align_many(texts, spans, offsets, special)
    for k, text in enumerate(texts):
        alone = align_text(text, spans[k], offsets[k], special[k], item_index=k, field="text")
        got = many[k]
        assert got is not None
        assert [a.tolist() for a in got] == [a.tolist() for a in alone]
        assert all(len(a) > 0 for a in got)
    (encoded,) = encode_texts(tokenizer, texts[:1], spans[:1], [0], ["text"], max_length=None)
    assert [a.tolist() for a in encoded.segments] == [a.tolist() for a in many[0]]


def test_texts_aligned_in_chunks_of_characters_equal_one_pass(minilm_tokenizer, monkeypatch):
    import internals.align

    texts = ["The cat sat.", "A much longer sentence, with commas.", "x", "Short one here."]
    spans = [((4, 7),), ((2, 6), (24, 30)), (), ((0, 5),)]
    args = (minilm_tokenizer, texts, spans, range(4), ["text"] * 4)
    whole = encode_texts(*args, max_length=None)
    monkeypatch.setattr(internals.align, "ALIGN_CHUNK_CHARS", 17)  # [12], [36], [1, 15]
    assert [len(range(40)[c]) for c in internals.align._char_chunks([12, 36, 1, 15], 17)] == [
        1,
        1,
        2,
    ]
    chunked = encode_texts(*args, max_length=None)
    for a, b in zip(whole, chunked, strict=True):
        assert [s.tolist() for s in a.segments] == [s.tolist() for s in b.segments]
