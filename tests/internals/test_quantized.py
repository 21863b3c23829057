"""Quantised models (optimum-quanto int8 weights on CPU): features near float, probes unchanged.

Documented tolerance for int8 weight quantisation (per-channel scales, float32 activations), by
site: relative error ||q - f|| / ||f|| <= 0.05 and cosine >= 0.995 for every item (MiniLM
measured: 0.013-0.029 and >= 0.9987). bitsandbytes needs CUDA and is not tested here; torchao
int8 weight-only was checked by hand (0.18 with torch 2.13: relative error 0.02 on MiniLM).
"""

from __future__ import annotations

import copy
import random

import pytest
import torch
from optimum.quanto import freeze, qint8, quantize
from transformers import QuantoConfig

from internals import SpanItem, load_subject, sites
from internals.errors import UnsupportedModelError
from internals.packaged import MINILM
from internals.quantized import quantization_of
from probes.logistic import fit_logistic_regression

RELATIVE_ERROR = 0.05
MIN_COSINE = 0.995

# A small UPOS-like treebank built from templates: determiners, adjectives, nouns, verbs
# (some words are nouns or verbs by context: "watch", "run", "book", ...), pronouns,
# adpositions, adverbs, auxiliaries, punctuation.
LEXICON = {
    "DET": ["the", "a", "this", "that", "every"],
    "ADJ": ["old", "green", "quick", "quiet", "bright", "heavy"],
    "NOUN": ["man", "dog", "river", "book", "light", "watch", "run", "plant", "park", "bank"],
    "VERB": ["saw", "found", "keeps", "likes"],
    "BASE": ["watch", "run", "plant", "book", "light", "park"],
    "PRON": ["they", "we", "you", "she"],
    "ADP": ["on", "in", "near", "under", "with"],
    "ADV": ["quickly", "often", "never", "today"],
    "AUX": ["will", "can"],
}
TEMPLATES = [
    ["DET", "ADJ", "NOUN", "VERB", "DET", "NOUN"],
    ["PRON", "AUX", "BASE", "DET", "NOUN", "ADP", "DET", "NOUN"],
    ["DET", "NOUN", "ADP", "DET", "NOUN", "VERB", "ADV"],
    ["PRON", "BASE", "DET", "ADJ", "NOUN", "ADV"],
]
TAGS = ["DET", "ADJ", "NOUN", "VERB", "PRON", "ADP", "ADV", "AUX", "PUNCT"]


def tagged_words(n_sentences: int, seed: int = 0) -> tuple[list[SpanItem], list[int], list[int]]:
    """One item per word, its tag index, and its sentence index."""
    rng = random.Random(seed)
    items, tags, sentence = [], [], []
    for k in range(n_sentences):
        template = rng.choice(TEMPLATES)
        words = [rng.choice(LEXICON[slot]) for slot in template] + ["."]
        labels = ["VERB" if slot == "BASE" else slot for slot in template] + ["PUNCT"]
        text, start = " ".join(words), 0
        for word, label in zip(words, labels):
            items.append(SpanItem(text, spans=((start, start + len(word)),)))
            tags.append(TAGS.index(label))
            sentence.append(k)
            start += len(word) + 1
    return items, tags, sentence


@pytest.fixture(scope="module")
def quantised(minilm):
    model = copy.deepcopy(minilm.model)
    quantize(model, weights=qint8)
    freeze(model)
    return load_subject(model, tokenizer=minilm.tokenizer)


@pytest.fixture(scope="module")
def corpus():
    return tagged_words(200)


@pytest.fixture(scope="module")
def both(minilm, quantised, corpus):
    items = corpus[0]
    every = sites.every_layer(minilm)
    return (
        minilm.features(items, every, progress=False),
        quantised.features(items, every, progress=False),
    )


def check_tolerance(want: torch.Tensor, got: torch.Tensor) -> None:
    assert got.dtype == torch.float32
    for k in range(want.shape[1]):
        f, q = want[:, k], got[:, k]
        assert ((q - f).norm() / f.norm()).item() <= RELATIVE_ERROR
        assert torch.nn.functional.cosine_similarity(f, q, dim=1).min().item() >= MIN_COSINE


@pytest.mark.slow
def test_int8_features_are_within_the_documented_tolerance(quantised, both):
    assert quantization_of(quantised.model) == "optimum-quanto"
    want, got = both
    check_tolerance(want, got)
    assert not torch.equal(want[:, 1:], got[:, 1:])  # the weights really are quantised


@pytest.mark.slow
def test_probe_accuracy_within_one_point_of_float(both, corpus):
    _, tags, sentence = corpus
    y = torch.tensor(tags)
    train = torch.tensor(sentence) < 10  # ten sentences: accuracy stays off the ceiling
    # One batched fit: (float, int8) x layers 3 and 6.
    X = torch.stack([features[:, site] for site in (3, 6) for features in both])
    probes = fit_logistic_regression(
        X[:, train], y[train].expand(4, -1).contiguous(), C=1.0, max_iter=500
    )
    hits = probes.predict(X[:, ~train]) == y[~train]
    accuracy = hits.double().mean(dim=1).tolist()
    for floating, quantised in (accuracy[:2], accuracy[2:]):
        assert 0.6 < floating < 0.99, accuracy  # a probe that can still move
        assert abs(floating - quantised) <= 0.01, accuracy


@pytest.mark.slow
def test_quantisation_config_goes_to_from_pretrained(minilm, both, corpus):
    loaded = load_subject(MINILM, quantization_config=QuantoConfig(weights="int8"))
    assert quantization_of(loaded.model) == "quanto"
    assert loaded.fingerprint != minilm.fingerprint
    items = corpus[0][:40]
    check_tolerance(both[0][:40], loaded.features(items, progress=False))


def test_a_quantised_model_has_no_random_twin(quantised):
    with pytest.raises(UnsupportedModelError, match="no random counterpart"):
        load_subject(quantised.model, tokenizer=quantised.tokenizer, init="random")
    with pytest.raises(UnsupportedModelError, match="has no random twin"):
        load_subject(MINILM, init="random", quantization_config=QuantoConfig(weights="int8"))
    with pytest.raises(UnsupportedModelError, match="backend='lens'"):
        load_subject(quantised.model, tokenizer=quantised.tokenizer, backend="lens")


def test_plain_models_are_not_taken_for_quantised(minilm):
    assert quantization_of(minilm.model) is None
