"""Small random-init models for tests (no real encoder-decoder or MLM head ships offline).

Each is drawn from seed 0 inside `torch.random.fork_rng`: the same weights every time, and the
global RNG left as the test had it (tests/conftest.py fails a test that changes it)."""

from __future__ import annotations

import torch
from transformers import (
    BertConfig,
    BertForMaskedLM,
    BertForSequenceClassification,
    BertModel,
    GPT2Config,
    GPT2LMHeadModel,
    GPT2Model,
    LlamaConfig,
    LlamaForCausalLM,
    T5Config,
    T5Model,
)

BERT_HEADS = {
    None: BertModel,
    "mlm": BertForMaskedLM,
    "classification": BertForSequenceClassification,
}


def random_bert(
    tokenizer, *, head: str | None = None, layers: int = 2, width: int = 32, **config
) -> torch.nn.Module:
    """A BERT encoder (optionally with an MLM or classification head) over `tokenizer`'s vocab."""
    settings = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=width,
        num_hidden_layers=layers,
        num_attention_heads=4 if width % 4 == 0 and width >= 64 else 2,
        intermediate_size=2 * width,
        **config,
    )
    return _built(BERT_HEADS[head], settings)


def random_gpt2(tokenizer, *, lm_head: bool = False, layers: int = 2, width: int = 32):
    """A GPT-2 decoder over a byte-level BPE tokenizer's vocabulary."""
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_embd=width,
        n_layer=layers,
        n_head=4 if width >= 64 else 2,
        n_positions=256,
        bos_token_id=tokenizer.bos_token_id if tokenizer.bos_token_id is not None else 1,
        eos_token_id=tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 2,
    )
    return _built(GPT2LMHeadModel if lm_head else GPT2Model, config)


def random_llama(tokenizer, *, layers: int = 2, width: int = 64) -> torch.nn.Module:
    """A Llama decoder with a causal-LM head."""
    config = LlamaConfig(
        num_hidden_layers=layers,
        hidden_size=width,
        intermediate_size=2 * width,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=len(tokenizer),
        bos_token_id=1,
        eos_token_id=2,
    )
    return _built(LlamaForCausalLM, config)


def random_t5(tokenizer, *, encoder_layers: int = 2, decoder_layers: int = 2) -> torch.nn.Module:
    """A T5 encoder-decoder over a SentencePiece tokenizer (pad 0 starts the decoder)."""
    config = T5Config(
        num_layers=encoder_layers,
        num_decoder_layers=decoder_layers,
        d_model=64,
        d_ff=128,
        num_heads=4,
        d_kv=16,
        vocab_size=len(tokenizer),
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
    )
    return _built(T5Model, config)


def _built(model_class: type[torch.nn.Module], config: object) -> torch.nn.Module:
    """`model_class(config)` in eval mode, weights drawn from seed 0 (global RNG restored)."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return model_class(config).eval()
