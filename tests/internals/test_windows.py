"""Long texts: sliding windows equal a forward pass of the window a word is read from.

References run the Hugging Face model on one window built by hand from the tokenizer's output
(windows of `max_length - specials` content tokens starting every half window, the last one
aligned to the end), and pick each word's window by brute force.
"""

from __future__ import annotations

import json
import random
import re
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from internals import ItemError, SpanItem, load_subject, sites
from internals.align import EncodedText
from internals.errors import TruncationWarning
from internals.text_rows import combine_pieces, plan_rows
from internals.windows import best_windows, window_starts
from tests.internals.test_equivalence import ITEMS, TWO_SPANS
from tests.tiny_models import random_bert, random_gpt2, random_t5

TOL = {"rtol": 1e-5, "atol": 1e-5}
WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "river",
    "bank",
    "ran",
    "quickly",
    "over",
    "under",
    "green",
    "old",
    "stone",
    "bridge",
    "while",
    "people",
    "watched",
    "from",
    "their",
    "windows",
    "and",
    "children",
    "laughed",
    "loudly",
    "because",
    "nothing",
    "happened",
    "yesterday",
]


def long_text(n_words: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    words = [rng.choice(WORDS) + ("." if k % 13 == 12 else "") for k in range(n_words)]
    return " ".join(words)


def words_of(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def content_tokens(tokenizer, text: str):
    """Ids and char offsets of the text's tokens without special tokens, and the specials."""
    enc = tokenizer(text, return_offsets_mapping=True, return_special_tokens_mask=True)
    ids, offsets, special = enc["input_ids"], enc["offset_mapping"], enc["special_tokens_mask"]
    keep = [k for k, s in enumerate(special) if not s]
    head = ids[: keep[0]]
    tail = ids[keep[-1] + 1 :]
    return [ids[k] for k in keep], [offsets[k] for k in keep], head, tail


def tokens_of(offsets, span) -> list[int]:
    start, end = span
    return [k for k, (a, b) in enumerate(offsets) if a < end and b > start and a < b]


def window_hidden(model, head, content, tail, start: int, width: int):
    ids = torch.tensor([[*head, *content[start : start + width], *tail]], device=model.device)
    with torch.no_grad():
        return [h.cpu() for h in model(input_ids=ids, output_hidden_states=True).hidden_states]


def brute_best(first: int, last: int, starts, width: int, causal: bool) -> int:
    """Best window by trying every one (earliest on ties); -1 if none holds the tokens."""
    best, best_context = -1, -1
    for k, s in enumerate(starts):
        if s <= first and last < s + width:
            context = first - s if causal else min(first - s, s + width - 1 - last)
            if context > best_context:
                best, best_context = k, context
    return best


def brute_best_all(first, last, starts, width: int, causal: bool):
    """`brute_best` for many segments at once: score every (segment, window) pair."""
    s = np.asarray(starts)[None, :]
    left, right = first[:, None] - s, s + width - 1 - last[:, None]
    context = np.where((left >= 0) & (right >= 0), left if causal else np.minimum(left, right), -1)
    return np.where(context.max(1) >= 0, context.argmax(1), -1)  # argmax: earliest of the best


@settings(max_examples=100, deadline=None)
@given(
    n=st.integers(1, 3000),
    width=st.integers(1, 600),
    stride_share=st.floats(0.01, 1.0),
    causal=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_every_word_is_read_from_exactly_one_best_window(n, width, stride_share, causal, seed):
    stride = max(1, int(width * stride_share))
    starts = window_starts(n, width, stride)
    assert starts[0] == 0 and starts[-1] == max(0, n - width)
    assert np.all(np.diff(starts) > 0) and np.all(np.diff(starts) <= stride)
    rng = np.random.default_rng(seed)
    cuts = np.flatnonzero(rng.random(n - 1) < 0.4) + 1  # random words of 1+ tokens
    words = np.split(np.arange(n), cuts)
    first = np.array([w[0] for w in words])
    last = np.array([w[-1] for w in words])
    chosen = best_windows(first, last, starts, width, causal=causal)
    np.testing.assert_array_equal(chosen, brute_best_all(first, last, starts, width, causal))
    # Laid out as rows: every word in exactly one row, all of its tokens; a whole-text segment's
    # tokens each exactly once.
    prefix, suffix = 1, 1
    ids = [-1, *range(n), -2]
    segments = [w + prefix for w in words] + [np.arange(n) + prefix]
    text = EncodedText(ids, segments, prefix, suffix)
    owners = [[0] * len(segments)]
    max_length = width + prefix + suffix
    plan = plan_rows(
        [text],
        owners,
        ["text"],
        max_length=max_length,
        long_texts="window",
        stride=stride,
        causal=causal,
    )
    seen: dict[int, list[int]] = {}
    for row, first_piece in zip(plan.rows, plan.first_piece):
        assert len(row.input_ids) <= max_length
        assert row.input_ids[0] == -1 and row.input_ids[-1] == -2
        for j, positions in enumerate(row.segments):
            owner = int(plan.pieces.segment[first_piece + j])
            seen.setdefault(owner, []).extend(row.input_ids[p] for p in positions)
    for index, word in enumerate(words):
        assert seen[index] == word.tolist()  # every token once, in order
        held = chosen[index] >= 0  # a word some window holds is read from that one window
        assert (int(np.sum(plan.pieces.segment == index)) == 1) == held
        if len(word) <= width - stride + 1:  # windows overlap by width - stride tokens
            assert held
    assert sorted(seen[len(words)]) == list(range(n))


def test_pieces_combine_like_pooling_all_tokens_at_once():
    generator = torch.Generator().manual_seed(0)
    tokens = torch.randn(10, 2, 4, generator=generator)
    pieces_of = [[0, 1, 2], [3], [4, 5, 6, 7], [8, 9]]  # segment 0: pieces 0-2, segment 1: 3
    from internals.text_rows import Pieces

    pieces = Pieces(np.array([0, 0, 0, 1]), np.array([0, 1, 2, 0]), np.array([3, 1, 4, 2]))
    want = {
        "mean": [tokens[:8].mean(0), tokens[8:].mean(0)],
        "max": [tokens[:8].amax(0), tokens[8:].amax(0)],
        "first": [tokens[0], tokens[8]],
        "last": [tokens[7], tokens[9]],
    }
    for how, expected in want.items():
        pooled = {
            "mean": lambda p: tokens[p].mean(0),
            "max": lambda p: tokens[p].amax(0),
            "first": lambda p: tokens[p[0]],
            "last": lambda p: tokens[p[-1]],
        }[how]
        rows = torch.stack([pooled(p) for p in pieces_of[:3]] + [pooled([8, 9])])
        got = combine_pieces(rows, pieces, 2, how)  # type: ignore[arg-type]
        torch.testing.assert_close(got, torch.stack(expected), **TOL)


@pytest.mark.slow
def test_window_equals_plain_forward_on_texts_that_fit(minilm):
    every = sites.every_layer(minilm)
    for items in (ITEMS, TWO_SPANS):
        windowed = minilm.features(items, every, long_texts="window", progress=False)
        plain = minilm.features(items, every, long_texts="error", progress=False)
        assert torch.equal(windowed, plain)


@pytest.fixture(scope="module")
def essay() -> str:
    return long_text(3000)


@pytest.mark.slow
def test_words_in_the_middle_of_windows_equal_that_window_alone(minilm, essay):
    tokenizer, model = minilm.tokenizer, minilm.model
    content, offsets, head, tail = content_tokens(tokenizer, essay)
    width = minilm.max_length - len(head) - len(tail)
    stride = width // 2
    starts = [*range(0, len(content) - width, stride), len(content) - width]
    assert len(starts) >= 8, "the essay should span many windows"
    words = words_of(essay)
    items, expected = [], []
    for start in starts[:-1]:
        middle = offsets[start + width // 2][0]
        span = next(w for w in words if w[0] <= middle < w[1])
        hidden = window_hidden(model, head, content, tail, start, width)
        rows = [len(head) + t - start for t in tokens_of(offsets, span)]
        expected.append(torch.stack([h[0, rows].mean(0) for h in hidden]))
        items.append(SpanItem(essay, spans=(span,)))
    got = minilm.features(items, sites.every_layer(minilm), progress=False)
    torch.testing.assert_close(got, torch.stack(expected), **TOL)


@pytest.mark.slow
def test_a_span_in_the_last_window_no_longer_errors(minilm, essay):
    tokenizer, model = minilm.tokenizer, minilm.model
    content, offsets, head, tail = content_tokens(tokenizer, essay)
    width = minilm.max_length - len(head) - len(tail)
    span = words_of(essay)[-1]
    item = SpanItem(essay, spans=(span,))
    got = minilm.features([item], sites.every_layer(minilm), progress=False)
    start = len(content) - width
    hidden = window_hidden(model, head, content, tail, start, width)
    rows = [len(head) + t - start for t in tokens_of(offsets, span)]
    torch.testing.assert_close(got[0], torch.stack([h[0, rows].mean(0) for h in hidden]), **TOL)
    with pytest.raises(ItemError, match=r"item 0: .*truncated"), warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        minilm.features([item], sites.last(minilm), long_texts="truncate", progress=False)


def test_decoder_words_come_from_the_window_with_the_most_left_context(bpe_tokenizer):
    model = random_gpt2(bpe_tokenizer, layers=2, width=32)  # 256 positions
    subject = load_subject(model, tokenizer=bpe_tokenizer)
    text = long_text(700, seed=1)
    content, offsets, head, tail = content_tokens(bpe_tokenizer, text)
    width = subject.max_length - len(head) - len(tail)
    starts = [*range(0, len(content) - width, width // 2), len(content) - width]
    items, expected = [], []
    for span in words_of(text)[::41]:
        tokens = tokens_of(offsets, span)
        k = brute_best(tokens[0], tokens[-1], starts, width, causal=True)
        hidden = window_hidden(model, head, content, tail, starts[k], width)
        rows = [len(head) + t - starts[k] for t in tokens]
        expected.append(torch.stack([h[0, rows].mean(0) for h in hidden]))
        items.append(SpanItem(text, spans=(span,)))
    got = subject.features(items, sites.every_layer(subject), progress=False)
    torch.testing.assert_close(got, torch.stack(expected), **TOL)


@pytest.mark.parametrize("how", ["mean", "max", "first", "last"])
def test_whole_long_text_pools_every_token_once_from_its_best_window(minilm_tokenizer, how):
    model = random_bert(minilm_tokenizer, layers=2, width=32, max_position_embeddings=64)
    subject = load_subject(model, tokenizer=minilm_tokenizer)
    assert subject.max_length == 64
    text = long_text(150, seed=2)
    content, _, head, tail = content_tokens(minilm_tokenizer, text)
    width = 64 - len(head) - len(tail)
    starts = [*range(0, len(content) - width, width // 2), len(content) - width]
    hidden = [window_hidden(model, head, content, tail, s, width) for s in starts]
    vectors = []
    for t in range(len(content)):
        k = brute_best(t, t, starts, width, causal=False)
        vectors.append(torch.stack([h[0, len(head) + t - starts[k]] for h in hidden[k]]))
    stacked = torch.stack(vectors)
    want = {
        "mean": stacked.mean(0),
        "max": stacked.amax(0),
        "first": stacked[0],
        "last": stacked[-1],
    }[how]
    got = subject.features([SpanItem(text)], sites.every_layer(subject), pool=how, progress=False)
    torch.testing.assert_close(got[0], want, **TOL)


@pytest.mark.slow
def test_truncate_warns_with_counts_and_error_names_the_item(minilm, essay):
    short = SpanItem("A short one.", spans=((2, 7),))
    items = [short, SpanItem(essay, spans=((0, 3),)), SpanItem(essay, spans=((4, 7),))]
    n_tokens = len(minilm.tokenizer(essay)["input_ids"])
    with pytest.warns(TruncationWarning, match=r"2 items .* (\d+) tokens were cut from 1 texts"):
        cut = minilm.features(items, sites.last(minilm), long_texts="truncate", progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TruncationWarning)
        windowed = minilm.features(items, sites.last(minilm), progress=False)
    assert n_tokens > 2 * minilm.max_length
    # The first words are read from the first window either way, so truncation keeps them.
    torch.testing.assert_close(cut, windowed, **TOL)
    with pytest.raises(ItemError, match=r"item 1: text has \d+ tokens, more than .* 512"):
        minilm.features(items, sites.last(minilm), long_texts="error", progress=False)


@pytest.mark.slow
def test_the_store_key_includes_the_long_text_policy(minilm, essay, tmp_path):
    item = SpanItem(essay, spans=(words_of(essay)[1500],))
    last = sites.last(minilm)
    windowed = minilm.features([item], last, store=tmp_path, progress=False)
    with pytest.raises(ItemError, match="truncated"), warnings.catch_warnings():
        warnings.simplefilter("ignore", TruncationWarning)
        minilm.features([item], last, long_texts="truncate", store=tmp_path, progress=False)
    again = minilm.features([item], last, window_stride=128, store=tmp_path, progress=False)
    metas = [json.loads(p.read_text()) for p in tmp_path.glob("*/*/meta.json")]
    assert {(m["long_texts"], m["window_stride"]) for m in metas} == {
        ("window", None),
        ("truncate", None),
        ("window", 128),
    }
    assert not torch.equal(windowed, again)  # another stride, other context: another value
    torch.testing.assert_close(
        minilm.features([item], last, store=tmp_path, progress=False), windowed, rtol=0, atol=0
    )


def test_bad_window_stride(minilm):
    with pytest.raises(ValueError, match="window_stride=0"):
        minilm.features(ITEMS, window_stride=0, progress=False)


def test_encoder_decoder_windows_feed_both_parts_the_same_window(sentencepiece_tokenizer):
    model = random_t5(sentencepiece_tokenizer)
    subject = load_subject(model, tokenizer=sentencepiece_tokenizer)
    subject.max_length = 40  # T5 has relative positions; a short window keeps the test small
    text = long_text(120, seed=3)
    content, offsets, head, tail = content_tokens(sentencepiece_tokenizer, text)
    width = 40 - len(head) - len(tail)
    starts = [*range(0, len(content) - width, width // 2), len(content) - width]
    items, expected = [], []
    for span in words_of(text)[::9]:
        tokens = tokens_of(offsets, span)
        k = brute_best(tokens[0], tokens[-1], starts, width, causal=False)
        ids = torch.tensor(
            [[*head, *content[starts[k] : starts[k] + width], *tail]], device=model.device
        )
        start = torch.full_like(ids[:, :1], model.config.decoder_start_token_id)
        with torch.no_grad():
            out = model(
                input_ids=ids,
                decoder_input_ids=torch.cat([start, ids], dim=1),
                output_hidden_states=True,
            )
        rows = [len(head) + t - starts[k] for t in tokens]
        vectors = [h[0, rows].mean(0).cpu() for h in out.encoder_hidden_states]
        vectors += [h[0, [r + 1 for r in rows]].mean(0).cpu() for h in out.decoder_hidden_states]
        expected.append(torch.stack(vectors))
        items.append(SpanItem(text, spans=(span,)))
    got = subject.features(items, sites.every_layer(subject), progress=False)
    torch.testing.assert_close(got, torch.stack(expected), **TOL)
