"""Tokenizers built on the spot for tests (no hub): a SentencePiece-unigram one, T5 style."""

from __future__ import annotations

from transformers import PreTrainedTokenizerFast

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "A man sleeps while a person rests on the sofa.",
    "Comparative correlatives: the more you read, the more you know!",
    "Numbers like 12.5, 2024 and 3,000 appear in text; so do emails@example.com.",
    "Héllo wörld, naïve café, Zürich and São Paulo are spelled with accents.",
    "He said: 'don't stop' — and then (quietly) left at 5 p.m.",
]


def train_sentencepiece(
    vocab_size: int = 300, corpus: list[str] | None = None
) -> PreTrainedTokenizerFast:
    """Train a unigram tokenizer with a Metaspace pre-tokenizer and a `</s>` post-processor, on
    `corpus` (default: a few sentences with numbers, accents and punctuation, repeated)."""
    from tokenizers import SentencePieceUnigramTokenizer
    from tokenizers.processors import TemplateProcessing

    tok = SentencePieceUnigramTokenizer()
    tok.train_from_iterator(
        CORPUS * 20 if corpus is None else corpus,
        vocab_size=vocab_size,
        special_tokens=["<pad>", "</s>", "<unk>"],
        unk_token="<unk>",
        show_progress=False,
    )
    eos = tok.token_to_id("</s>")
    tok.post_processor = TemplateProcessing(single="$A </s>", special_tokens=[("</s>", eos)])
    return PreTrainedTokenizerFast(
        tokenizer_object=tok._tokenizer, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
