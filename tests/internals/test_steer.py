"""Steering (`internals.intervene.steer`, `Steering`, `steering_effect`): the torch hook adds
`alpha * direction` to `hidden_states[k]`, its LM loss equals the nnsight edit's, and the logit
change of a token steered after the final norm is `alpha * W_U[token] . direction`."""

from __future__ import annotations

import pytest
import torch

from internals import InterventionError, Site, load_subject
from internals.intervene import Steering, lm_loss, steer
from internals.steer import steering
from internals.steering_effect import steering_effect
from tests.tiny_models import random_llama

TEXTS = ["The chef that went to the stores was out of food.", "A short one."]


@pytest.fixture(scope="module")
def llama(bpe_tokenizer):
    return load_subject(random_llama(bpe_tokenizer, layers=3), tokenizer=bpe_tokenizer)


@pytest.fixture(scope="module")
def direction(llama):
    return torch.randn(llama.dim, generator=torch.Generator().manual_seed(0))


def site_value(subject, text: str, layer: int) -> torch.Tensor:
    """`hidden_states[layer]` as the model goes on with it: the input of block `layer`, or of
    the LM head for the last layer (Hugging Face's own `hidden_states` are recorded by hooks
    registered before any user hook, so they miss the edit)."""
    blocks = subject.model.get_submodule(subject.layout.parts["decoder"].layers)
    last = layer == subject.layout.parts["decoder"].n_layers
    module = subject.model.get_output_embeddings() if last else blocks[layer]
    seen = []

    def record(module, args, kwargs):
        seen.append(args[0] if args else kwargs["hidden_states"])

    handle = module.register_forward_pre_hook(record, with_kwargs=True)
    ids = subject.tokenizer(text, return_tensors="pt")["input_ids"]
    try:
        with torch.no_grad():
            subject.model(input_ids=ids)
    finally:
        handle.remove()
    return seen[0]


@pytest.mark.parametrize("layer", [0, 1, 2, 3])
def test_the_hook_adds_the_direction_at_the_site(llama, direction, layer):
    site = Site("decoder", layer)
    plain = site_value(llama, TEXTS[0], layer)
    with steer(llama, site, direction, 2.5) as edit:
        steered = site_value(llama, TEXTS[0], layer)
    assert isinstance(edit, Steering)
    torch.testing.assert_close(steered, plain + 2.5 * direction)
    if layer < 3:  # what comes before the site is untouched
        before = site_value(llama, TEXTS[0], 3)
        with steer(llama, Site("decoder", 3), direction, 2.5):
            torch.testing.assert_close(site_value(llama, TEXTS[0], layer), plain, rtol=0, atol=0)
        torch.testing.assert_close(site_value(llama, TEXTS[0], 3), before, rtol=0, atol=0)


@pytest.mark.parametrize("layer", [0, 1, 3])
def test_the_hook_and_the_nnsight_edit_give_one_loss(llama, direction, layer):
    site = Site("decoder", layer)
    plain = lm_loss(llama, TEXTS, progress=False)
    edited = lm_loss(llama, TEXTS, {site: Steering(direction, 1.5)}, progress=False)
    with steer(llama, site, direction, 1.5):
        hooked = lm_loss(llama, TEXTS, progress=False)
    assert abs(edited.mean - plain.mean) > 1e-3
    torch.testing.assert_close(hooked.nll, edited.nll, rtol=1e-5, atol=1e-5)


def test_steering_effect_after_the_final_norm_moves_a_logit_by_the_unembedding(llama, direction):
    site = Site("decoder", 3)  # the final norm's output: logits = lm_head(h), linear, no bias
    frame = steering_effect(
        llama, TEXTS, site, direction, alphas=(0.0, 0.5, 2.0), token=5, progress=False
    )
    unembedding = llama.model.get_output_embeddings().weight[5].double()
    want = frame["alpha"].to_torch().double() * float(unembedding @ direction.double())
    torch.testing.assert_close(frame["logit_delta"].to_torch(), want, rtol=1e-4, atol=1e-5)
    assert frame["delta"][0] == pytest.approx(0.0, abs=1e-9)
    loss = lm_loss(llama, TEXTS, {site: Steering(direction, 2.0)}, progress=False).mean
    assert frame["loss"][2] == pytest.approx(loss) and frame["delta"][2] != 0
    assert frame.columns[:7] == [
        "model",
        "site_name",
        "layer",
        "alpha",
        "base_loss",
        "loss",
        "delta",
    ]


def test_steering_refuses_what_it_cannot_do(llama, direction):
    with pytest.raises(InterventionError, match=r"give a float \[64\] vector"):
        steering_effect(llama, TEXTS, Site("decoder", 1), direction[:10], progress=False)
    with pytest.raises(InterventionError, match="only resid_post"):
        steering(llama, Site("decoder", 1, "attn_out"), direction, 1.0)
    with pytest.raises(InterventionError, match="not finite"):
        steering(llama, Site("decoder", 1), direction, float("nan"))
    with pytest.raises(InterventionError, match=r"is \d+ tokens"):
        steering_effect(llama, TEXTS, Site("decoder", 1), direction, token=" abracadabra")
