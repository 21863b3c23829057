"""Word and span alignment from offsets, on WordPiece, byte-level BPE and SentencePiece."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers import PreTrainedTokenizer

from internals.align import encode_texts
from internals.errors import ItemError, TokenizerError

LETTERS = "abcdefghijklmnopqrstuvwxyzABCXYZéüñçøßàÉ"
PUNCT = ".,;:!?'\"()-/%$&@#"
OTHER = "0123456789" + "東京語αβγ"
ALPHABET = LETTERS + PUNCT + OTHER
TOKENIZERS = ["minilm_tokenizer", "bpe_tokenizer", "sentencepiece_tokenizer"]

words = st.text(alphabet=ALPHABET, min_size=1, max_size=8)
gaps = st.text(alphabet=" \t", min_size=1, max_size=3)


@st.composite
def texts(draw):
    chosen = draw(st.lists(words, min_size=1, max_size=8))
    text, spans = draw(st.text(alphabet=" ", max_size=2)), []
    for word in chosen:
        spans.append((len(text), len(text) + len(word)))
        text += word + draw(gaps)
    return text, spans


def trimmed_ranges(tokenizer, text):
    enc = tokenizer(text, return_offsets_mapping=True, return_special_tokens_mask=True)
    ranges = []
    for (a, b), special in zip(enc["offset_mapping"], enc["special_tokens_mask"]):
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        ranges.append((a, b, bool(special)))
    return ranges


@pytest.mark.parametrize("tokenizer_name", TOKENIZERS)
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sample=texts())
def test_each_word_covers_exactly_its_characters(request, tokenizer_name, sample):
    tokenizer = request.getfixturevalue(tokenizer_name)
    text, spans = sample
    (encoded,) = encode_texts(tokenizer, [text], [spans], [0], ["text"], max_length=None)
    ranges = trimmed_ranges(tokenizer, text)
    assert len(encoded.segments) == len(spans)
    for (start, end), positions in zip(spans, encoded.segments):
        assert len(positions) > 0
        covered = set()
        for p in positions:
            a, b, special = ranges[p]
            assert not special
            assert start <= a < b <= end, (text, (start, end), (a, b))
            covered.update(range(a, b))
        assert covered == set(range(start, end)), (text[start:end], covered)


def test_whole_text_takes_every_non_special_token(minilm_tokenizer):
    text = "The cat sat."
    (encoded,) = encode_texts(minilm_tokenizer, [text], [()], [0], ["text"], max_length=None)
    assert encoded.segments[0].tolist() == [1, 2, 3, 4]  # [CLS] and [SEP] left out


def test_leading_space_tokens_are_trimmed(bpe_tokenizer):
    text = "Hi  there"
    (encoded,) = encode_texts(bpe_tokenizer, [text], [((4, 9),)], [0], ["text"], max_length=None)
    tokens = bpe_tokenizer.convert_ids_to_tokens(
        [encoded.input_ids[p] for p in encoded.segments[0]]
    )
    assert tokens == ["Ġthere"]


class WhitespaceTokenizer(PreTrainedTokenizer):
    """A pure-Python tokenizer: it cannot return character offsets."""

    def __init__(self, **kwargs):
        self.vocab = {"[UNK]": 0, "a": 1}
        super().__init__(unk_token="[UNK]", **kwargs)

    def get_vocab(self):
        return dict(self.vocab)

    @property
    def vocab_size(self):
        return len(self.vocab)

    def _tokenize(self, text, **kwargs):
        return text.split()

    def _convert_token_to_id(self, token):
        return self.vocab.get(token, 0)

    def _convert_id_to_token(self, index):
        return {v: k for k, v in self.vocab.items()}[index]


def test_tokenizer_without_offsets_is_an_error():
    slow = WhitespaceTokenizer()
    with pytest.raises(TokenizerError, match="fast tokenizer"):
        encode_texts(slow, ["a"], [()], [0], ["text"], max_length=None)


def test_span_lost_to_truncation_names_the_item(minilm_tokenizer):
    text = "word " * 50 + "target"
    span = (len(text) - 6, len(text))
    with pytest.raises(ItemError, match=r"item 7: .*truncated"):
        encode_texts(minilm_tokenizer, [text], [(span,)], [7], ["text"], max_length=16)


def test_decoder_bos_is_never_pooled(bpe_tokenizer):
    """A Llama-style tokenizer that prepends BOS: the BOS is marked special and left out."""
    from tokenizers import Tokenizer
    from tokenizers.processors import TemplateProcessing
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer.from_str(bpe_tokenizer.backend_tokenizer.to_str())
    bos = bpe_tokenizer.convert_tokens_to_ids("<|im_start|>")
    backend.post_processor = TemplateProcessing(
        single="<|im_start|> $A", special_tokens=[("<|im_start|>", bos)]
    )
    with_bos = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<|im_start|>")
    text = "The cat sat."
    (encoded,) = encode_texts(with_bos, [text], [()], [0], ["text"], max_length=None)
    assert encoded.input_ids[0] == bos
    assert 0 not in encoded.segments[0].tolist()
    assert encoded.segments[0].tolist() == list(range(1, len(encoded.input_ids)))
