"""Filler scoring on masked and causal LMs equals a hand computation on single sentences."""

from __future__ import annotations

import pytest
import torch
from transformers import BertModel

from suites.cc import (
    MASK,
    SemanticConfig,
    causal_filler_log_probs,
    filler_token_id,
    lm_kind,
    load_adjective_pairs,
    masked_filler_log_probs,
    run_semantic_test,
    single_token_pairs,
)
from suites.cc.errors import ScoringError
from suites.cc.scoring import start_token_id
from tests.tiny_models import random_bert, random_gpt2

TEXTS = [
    f"The stronger you are, the faster you are. Terry is stronger than John. Therefore, Terry is"
    f" {MASK} than John.",
    f"Anna is taller than Mark. Therefore, Anna is {MASK} than Mark.",
    f"The older you are, the richer you are. Therefore, Kate is {MASK} than Paul.",
]
FILLERS = [("faster", "slower"), ("older", "younger"), ("richer", "poorer")]


@pytest.fixture(scope="module")
def tiny_bert(minilm_tokenizer):
    return random_bert(minilm_tokenizer, head="mlm")


@pytest.fixture(scope="module")
def tiny_gpt2(bpe_tokenizer):
    return random_gpt2(bpe_tokenizer, lm_head=True)


def test_filler_tokens_take_the_in_sentence_form(minilm_tokenizer, bpe_tokenizer):
    assert filler_token_id(minilm_tokenizer, "faster") == minilm_tokenizer.convert_tokens_to_ids(
        "faster"
    )
    assert filler_token_id(bpe_tokenizer, "faster") == bpe_tokenizer.convert_tokens_to_ids(
        "Ġfaster"
    )
    assert filler_token_id(minilm_tokenizer, "sadder") is None
    for tokenizer in (minilm_tokenizer, bpe_tokenizer):
        kept, dropped = single_token_pairs(load_adjective_pairs(), tokenizer)
        assert "sadder" in dropped["antonym"].to_list() and "sad" in dropped["reason"][0]
        assert all(
            filler_token_id(tokenizer, w) is not None
            for p in kept
            for w in (p.comparative, p.antonym)
        )
        assert len(kept) + dropped.height == len(load_adjective_pairs()) and len(kept) >= 15


def test_masked_scores_equal_one_sentence_at_a_time(tiny_bert, minilm_tokenizer):
    got = masked_filler_log_probs(
        tiny_bert, minilm_tokenizer, TEXTS, FILLERS, batch_size=2, progress=False
    )
    assert got.shape == (3, 2)
    for row, (text, words) in enumerate(zip(TEXTS, FILLERS)):
        enc = minilm_tokenizer(text, return_tensors="pt")  # "[MASK]" is BERT's mask token
        at = (enc["input_ids"][0] == minilm_tokenizer.mask_token_id).nonzero().item()
        with torch.no_grad():
            log_probs = tiny_bert(**enc).logits[0, at].log_softmax(-1)
        for col, word in enumerate(words):
            want = log_probs[minilm_tokenizer.convert_tokens_to_ids(word)].item()
            assert got[row, col].item() == pytest.approx(want, abs=1e-4)


def test_causal_scores_equal_a_hand_sum(tiny_gpt2, bpe_tokenizer):
    got = causal_filler_log_probs(
        tiny_gpt2, bpe_tokenizer, TEXTS, FILLERS, batch_size=4, progress=False
    )
    cont = causal_filler_log_probs(
        tiny_gpt2, bpe_tokenizer, TEXTS, FILLERS, score="continuation", progress=False
    )
    bos = bpe_tokenizer.bos_token_id
    for row, (text, words) in enumerate(zip(TEXTS, FILLERS)):
        for col, word in enumerate(words):
            ids = [bos, *bpe_tokenizer(text.replace(MASK, word))["input_ids"]]
            with torch.no_grad():
                lp = tiny_gpt2(torch.tensor([ids])).logits[0].log_softmax(-1)
            per_token = [lp[t, ids[t + 1]].item() for t in range(len(ids) - 1)]
            assert got[row, col].item() == pytest.approx(sum(per_token), abs=1e-3)
            n_prefix = len(bpe_tokenizer(text[: text.index(MASK)].rstrip())["input_ids"])
            assert cont[row, col].item() == pytest.approx(sum(per_token[n_prefix:]), abs=1e-3)
        # the shared prefix cancels: both scorings make the same decision by the same margin
        margin = got[row, 0] - got[row, 1]
        assert margin.item() == pytest.approx((cont[row, 0] - cont[row, 1]).item(), abs=1e-3)


def test_kinds_and_errors(tiny_bert, tiny_gpt2, minilm_tokenizer):
    assert lm_kind(tiny_bert) == "masked" and lm_kind(tiny_gpt2) == "causal"
    with torch.random.fork_rng(), pytest.raises(ScoringError, match="neither a masked nor"):
        lm_kind(BertModel(tiny_bert.config))  # its random init draws inside the fork
    with pytest.raises(ScoringError, match="'sadder' is several tokens"):
        masked_filler_log_probs(
            tiny_bert, minilm_tokenizer, TEXTS[:1], [("happier", "sadder")], progress=False
        )
    with pytest.raises(ScoringError, match="not exactly one mask"):
        masked_filler_log_probs(
            tiny_bert, minilm_tokenizer, ["no mask here"], [FILLERS[0]], progress=False
        )


@pytest.mark.parametrize("which", ["bert", "gpt2"])
def test_full_test_on_random_models(which, tiny_bert, tiny_gpt2, minilm_tokenizer, bpe_tokenizer):
    model, tokenizer = (
        (tiny_bert, minilm_tokenizer) if which == "bert" else (tiny_gpt2, bpe_tokenizer)
    )
    n = 3 if which == "bert" else 1  # the causal run scores 2 x 39 sentences per instance
    run = run_semantic_test(model, tokenizer, config=SemanticConfig(n_instances=n), progress=False)
    assert run.kind == ("masked" if which == "bert" else "causal")
    assert run.scores.height == n * 49 and run.scores["adj2_log_prob"].is_finite().all()
    table = run.table2()
    decisions = run.scores.filter(run.scores["schema"] == "S1")
    want = (decisions["adj2_log_prob"] > decisions["ant2_log_prob"]).mean()
    assert table["accuracy_S1"][0] == pytest.approx(want)
    assert run.table4().height == 3 and run.table5().height == 3
    assert (run.conditioned_on is None) == (which == "bert")


@pytest.mark.slow
def test_smollm2_scores_equal_a_hand_sum(smollm2_dir, bpe_tokenizer):
    from internals import load_subject

    subject = load_subject(str(smollm2_dir), head="lm")
    assert lm_kind(subject.model) == "causal"
    assert start_token_id(subject.tokenizer) == bpe_tokenizer.bos_token_id  # SmolLM2 adds no BOS
    got = causal_filler_log_probs(
        subject.model, subject.tokenizer, TEXTS[1:], FILLERS[1:], progress=False
    )
    assert torch.isfinite(got).all() and (got < 0).all()
    for row, (text, words) in enumerate(zip(TEXTS[1:], FILLERS[1:])):
        for col, word in enumerate(words):
            ids = [
                bpe_tokenizer.bos_token_id,
                *bpe_tokenizer(text.replace(MASK, word))["input_ids"],
            ]
            with torch.no_grad():
                lp = subject.model(torch.tensor([ids])).logits[0].log_softmax(-1)
            want = sum(lp[t, ids[t + 1]].item() for t in range(len(ids) - 1))
            assert got[row, col].item() == pytest.approx(want, rel=1e-4)
