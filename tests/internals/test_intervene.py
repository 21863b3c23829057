"""Editing the hidden state at a site in the forward pass (nnsight) and the LM loss that results:
against Hugging Face's own loss, an identity edit, and the same edit made by a torch hook."""

from __future__ import annotations

import pytest
import torch

from internals import InterventionError, Site, load_subject
from internals.intervene import lm_loss
from tests.tiny_models import random_bert, random_llama

TEXTS = [
    "The chef that went to the stores was out of food.",
    "Colorless green ideas sleep furiously.",
    "A short one.",
    "The chef that went to the stores was out of food.",
]


@pytest.fixture(scope="module")
def llama(bpe_tokenizer):
    return load_subject(random_llama(bpe_tokenizer, layers=3), tokenizer=bpe_tokenizer)


def halve_odd_dims(hidden: torch.Tensor) -> torch.Tensor:
    scale = torch.ones(hidden.shape[-1], dtype=hidden.dtype, device=hidden.device)
    scale[1::2] = 0.5
    return hidden * scale


def test_unedited_loss_equals_hugging_face_loss(llama) -> None:
    got = lm_loss(llama, TEXTS, progress=False)
    for i, text in enumerate(TEXTS):
        ids = llama.tokenizer(text, return_tensors="pt")["input_ids"].to(llama.model.device)
        with torch.no_grad():
            want = llama.model(input_ids=ids, labels=ids).loss
        assert int(got.tokens[i]) == ids.shape[1] - 1
        assert float(got.nll[i]) / int(got.tokens[i]) == pytest.approx(float(want), rel=1e-5)
    assert got.nll[0] == got.nll[3]


def test_identity_edit_leaves_the_loss_unchanged(llama) -> None:
    plain = lm_loss(llama, TEXTS, progress=False)
    for layer in (0, 2, 3):
        same = lm_loss(llama, TEXTS, {Site("decoder", layer): lambda h: h}, progress=False)
        torch.testing.assert_close(same.nll, plain.nll, rtol=0, atol=1e-9)


def hook_loss(subject, texts, layer: int) -> float:
    """The same edit through a plain torch hook on the module that holds `hidden_states[k]`."""
    part = subject.layout.parts["decoder"]
    blocks = subject.model.get_submodule(part.layers)
    if layer == 0:

        def pre(module, args, kwargs):
            if args:
                return (halve_odd_dims(args[0]), *args[1:]), kwargs
            return args, {**kwargs, "hidden_states": halve_odd_dims(kwargs["hidden_states"])}

        handle = blocks[0].register_forward_pre_hook(pre, with_kwargs=True)
    else:
        module = (
            subject.model.get_submodule(part.final_norm)
            if layer == part.n_layers and part.final_norm
            else blocks[layer - 1]
        )

        def post(module, args, output):
            if isinstance(output, tuple):
                return (halve_odd_dims(output[0]), *output[1:])
            return halve_odd_dims(output)

        handle = module.register_forward_hook(post)
    try:
        total, count = 0.0, 0
        for text in texts:
            ids = subject.tokenizer(text, return_tensors="pt")["input_ids"].to(subject.model.device)
            with torch.no_grad():
                loss = subject.model(input_ids=ids, labels=ids).loss
            total += float(loss) * (ids.shape[1] - 1)
            count += ids.shape[1] - 1
    finally:
        handle.remove()
    return total / count


@pytest.mark.parametrize("layer", [0, 1, 3])
def test_edit_changes_the_loss_as_a_torch_hook_does(llama, layer: int) -> None:
    plain = lm_loss(llama, TEXTS, progress=False).mean
    edited = lm_loss(llama, TEXTS, {Site("decoder", layer): halve_odd_dims}, progress=False).mean
    assert abs(edited - plain) > 1e-4
    assert edited == pytest.approx(hook_loss(llama, TEXTS, layer), rel=1e-5)


def test_masked_lm_loss_with_and_without_an_edit(minilm_tokenizer) -> None:
    model = random_bert(minilm_tokenizer, head="mlm", layers=2, width=32)
    subject = load_subject(model, tokenizer=minilm_tokenizer)
    plain = lm_loss(subject, TEXTS, progress=False, seed=1)
    assert subject.kind == "encoder" and bool((plain.tokens >= 1).all())
    again = lm_loss(subject, TEXTS, {Site("encoder", 1): lambda h: h}, progress=False, seed=1)
    torch.testing.assert_close(again.nll, plain.nll, rtol=0, atol=1e-9)
    edited = lm_loss(subject, TEXTS, {Site("encoder", 1): lambda h: 0 * h}, progress=False, seed=1)
    assert abs(edited.mean - plain.mean) > 1e-3
    # masked positions: 15% of each text's own tokens, at least one, never special tokens
    n_words = len(minilm_tokenizer(TEXTS[2], add_special_tokens=False)["input_ids"])
    assert int(plain.tokens[2]) == max(1, round(0.15 * n_words))


def test_interventions_refuse_what_they_cannot_do(bpe_tokenizer, llama) -> None:
    from tests.tiny_models import random_gpt2

    bare = load_subject(random_gpt2(bpe_tokenizer), tokenizer=bpe_tokenizer)
    with pytest.raises(InterventionError, match="head='lm'"):
        lm_loss(bare, TEXTS, progress=False)
    with pytest.raises(InterventionError, match="no mask token"):
        lm_loss(llama, TEXTS, objective="masked", progress=False)
