"""Extraction on a CUDA device against a bare forward pass on the same batches.

Run where a GPU is (`nox -s bench -- benchmarks/bench_cuda_extract.py`); skipped without CUDA.
The models have MiniLM's shape (6-layer BERT, 384 wide) and SmolLM2-135M's (30-layer Llama, 576
wide) with random weights: a GPU host here cannot fetch the real ones, and the time of a forward
pass does not depend on the weights' values. Their tokenizer is a SentencePiece unigram model of
8,000 pieces trained on the shipped EWT train sample, so sentences have realistic token counts.
Every site of every layer is read, words mean-pooled on the device, features copied to the host;
the features of the first items must equal the CPU's (H200: within 3e-6).
"""

from __future__ import annotations

import copy
import statistics
from collections.abc import Callable

import pytest
import torch
from transformers import BertConfig, BertModel, LlamaConfig, LlamaModel

from benchmarks.ewt_sample import sentences, word_items
from benchmarks.extract_common import interleaved, load, model_batches, ratio_line
from benchmarks.figures import Figures
from internals import load_subject, sites
from tests.tiny_tokenizers import train_sentencepiece

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.full,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

N_SENTENCES = 800  # the shipped EWT dev sample
CHECK_ITEMS = 2000


def minilm_shaped(vocab: int) -> torch.nn.Module:
    return BertModel(
        BertConfig(
            vocab_size=vocab,
            hidden_size=384,
            num_hidden_layers=6,
            num_attention_heads=12,
            intermediate_size=1536,
        ),
        add_pooling_layer=False,
    )


def smollm2_shaped(vocab: int) -> torch.nn.Module:
    return LlamaModel(
        LlamaConfig(
            vocab_size=vocab,
            hidden_size=576,
            num_hidden_layers=30,
            num_attention_heads=9,
            num_key_value_heads=3,
            intermediate_size=1536,
            max_position_embeddings=2048,
            pad_token_id=0,
        )
    )


@pytest.fixture(scope="module")
def tokenizer():
    return train_sentencepiece(8000, [s.text for s in sentences(3000, "train")])


def run(
    figures: Figures,
    name: str,
    build: Callable[[int], torch.nn.Module],
    tokenizer,
    side: str,
) -> None:
    torch.manual_seed(0)
    model = build(len(tokenizer)).eval()
    plain = copy.deepcopy(model).cuda()  # unhooked: the subject's copy is wrapped by nnsight
    subject = load_subject(model, tokenizer=tokenizer, device="cuda", padding_side=side)
    items = word_items(N_SENTENCES)
    every = sites.every_layer(subject)
    same = model_batches(subject, items)

    def bare() -> None:
        with torch.no_grad():
            for batch in same:
                plain(**batch.inputs)
        torch.cuda.synchronize()

    def ours() -> None:
        subject.features(items, every, progress=False)

    bare_runs, our_runs = interleaved([bare, ours], rounds=7)
    tokens = sum(int(b.inputs["attention_mask"].sum()) for b in same)
    print(
        f"\n[cuda extract] {name}, {side} padding, {N_SENTENCES} EWT sentences,"
        f" {len(items)} word items, {tokens} tokens, {len(every)} sites, {len(same)} batches,"
        " 7 interleaved rounds:"
        f" bare forward {min(bare_runs) * 1e3:.1f} ms, lingprobe {min(our_runs) * 1e3:.1f} ms"
        f" (median {statistics.median(our_runs) * 1e3:.1f}) = {ratio_line(our_runs, bare_runs)};"
        f" {torch.cuda.get_device_name()} ({load()})"
    )
    check = items[:CHECK_ITEMS]  # the same features as on the CPU
    reference = load_subject(
        copy.deepcopy(plain).cpu(), tokenizer=tokenizer, device="cpu", padding_side=side
    )
    want = reference.features(check, sites.every_layer(reference), progress=False)
    gap = float((subject.features(check, every, progress=False) - want).abs().max())
    print(f"  features of the first {len(check)} items, cuda vs cpu: largest gap {gap:.1e}")
    assert gap < 1e-4
    figures.record(
        ratio=min(our_runs) / min(bare_runs),
        against=f"a bare forward pass of the {name} on the same batches (CUDA)",
        at_most=1.10,
        times={"lingprobe": min(our_runs), "bare_forward": min(bare_runs)},
        median_ratio=statistics.median(our_runs) / statistics.median(bare_runs),
        cuda_vs_cpu_gap=gap,
    )


def test_bench_cuda_encoder_features_vs_bare_forward(figures: Figures, tokenizer) -> None:
    run(figures, "MiniLM-shaped BERT", minilm_shaped, tokenizer, "right")


@pytest.mark.parametrize("side", ["right", "left"])
def test_bench_cuda_decoder_features_vs_bare_forward(
    figures: Figures, tokenizer, side: str
) -> None:
    run(figures, "SmolLM2-135M-shaped Llama", smollm2_shaped, tokenizer, side)
