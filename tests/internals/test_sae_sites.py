"""SAE sites: a small random SAE built here (a linear encoder and a ReLU, SAELens' standard
architecture), checked against encoding every token of a plain HF forward and pooling after."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from torch import nn

from internals import (
    Reading,
    Site,
    SiteError,
    SpanItem,
    extract_shards,
    load_subject,
    sae_sites,
    sites,
    store_run,
)
from probes import fit_logistic_regression
from tests.internals.reference import naive_token_lists

ITEMS = [
    SpanItem("The quick brown fox jumps over the lazy dog.", spans=((4, 19), (40, 44))),
    SpanItem("Unbelievably, tokenisation splits words.", spans=((0, 12), (14, 26))),
    SpanItem("A short one, and another.", spans=((2, 7), (13, 24))),
]


class TinySae(nn.Module):
    """SAELens' standard SAE: `relu((x - b_dec) @ W_enc + b_enc)`; `cfg.d_in` as SAELens has it."""

    def __init__(self, d_in: int, d_sae: int, seed: int) -> None:
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.W_enc = nn.Parameter(torch.randn(d_in, d_sae, generator=gen) / d_in**0.5)
        self.b_enc = nn.Parameter(torch.randn(d_sae, generator=gen) * 0.1)
        self.b_dec = nn.Parameter(torch.randn(d_in, generator=gen) * 0.1)
        self.cfg = SimpleNamespace(d_in=d_in, d_sae=d_sae)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu((x - self.b_dec) @ self.W_enc + self.b_enc)


class LinearEncoderSae(nn.Module):
    """Any module with `encode` and an `encoder` nn.Linear (no SAELens config)."""

    def __init__(self, d_in: int, d_sae: int, seed: int) -> None:
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        with torch.random.fork_rng():  # nn.Linear's own init draws from the global generator
            self.encoder = nn.Linear(d_in, d_sae)
        with torch.no_grad():
            self.encoder.weight.copy_(torch.randn(d_sae, d_in, generator=gen) / d_in**0.5)
            self.encoder.bias.zero_()

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.encoder(x))


def naive_sae_features(subject, sae, layer: int, how: str) -> torch.Tensor:
    """HF forward per text; every token of a span encoded, then pooled; `[item, width x d_sae]`."""
    rows = []
    for item in ITEMS:
        ids, token_lists = naive_token_lists(subject.tokenizer, item.text, item.spans)
        with torch.no_grad():
            out = subject.model(input_ids=torch.tensor([ids]), output_hidden_states=True)
            latents = sae.encode(out.hidden_states[layer][0])
        pooled = [
            latents[tokens].mean(0) if how == "mean" else latents[tokens].max(0).values
            for tokens in token_lists
        ]
        rows.append(torch.cat(pooled))
    return torch.stack(rows)


@pytest.mark.parametrize("how", ["mean", "max"])
def test_tokens_are_encoded_then_pooled(minilm, how):
    sae = TinySae(minilm.dim, 48, seed=1)
    site = sites.sae(Site("encoder", 3), sae)
    got = minilm.features(ITEMS, [site], pool=how, progress=False)
    want = naive_sae_features(minilm, sae, 3, how)
    assert got.shape == (len(ITEMS), 1, 2 * 48)
    torch.testing.assert_close(got[:, 0], want, atol=1e-4, rtol=1e-4)
    if how == "mean":  # encoding the pooled vector instead gives other latents
        plain = minilm.features(ITEMS, [Site("encoder", 3)], progress=False)[:, 0]
        encoded_after = torch.cat([sae.encode(part) for part in plain.view(-1, minilm.dim)])
        assert not torch.allclose(encoded_after.view(len(ITEMS), -1), got[:, 0], atol=1e-3)


def test_several_layers_and_negative_layers(minilm):
    sae = LinearEncoderSae(minilm.dim, 16, seed=2)
    chosen = [sites.sae("encoder.2", sae), sites.sae(Site("encoder", -1), sae)]
    got = minilm.features(ITEMS[:2], chosen, progress=False)
    resolved = sites.resolve(minilm, chosen)
    assert [s.layer for s in resolved] == [2, 6]
    assert all(isinstance(s, sites.SaeSite) for s in resolved)
    torch.testing.assert_close(got[:, 1], naive_sae_features(minilm, sae, 6, "mean")[:2])


def test_store_key_follows_the_sae_weights(minilm, tmp_path):
    first, second = TinySae(minilm.dim, 32, seed=3), TinySae(minilm.dim, 32, seed=4)
    a, b = sites.sae("encoder.1", first), sites.sae("encoder.1", second)
    assert a.name.startswith("encoder.1.sae-") and a.name != b.name
    assert a == sites.sae("encoder.1", TinySae(minilm.dim, 32, seed=3))  # same weights, same site
    stored_a = minilm.features(ITEMS, [a], store=tmp_path, progress=False)
    stored_b = minilm.features(ITEMS, [b], store=tmp_path, progress=False)
    assert not torch.allclose(stored_a, stored_b)
    folders = {p.name for p in tmp_path.glob("*/*/encoder.1.sae-*")}
    assert folders == {a.name, b.name}
    again = minilm.features(ITEMS, [a], store=tmp_path, progress=False)
    torch.testing.assert_close(again, stored_a, atol=0, rtol=0)
    lazy = minilm.features(ITEMS, [a], store=tmp_path, lazy=True, progress=False)
    assert lazy.site_names == (a.name,)
    torch.testing.assert_close(lazy.to_tensor(), stored_a, atol=0, rtol=0)
    with torch.no_grad():
        first.W_enc.mul_(2.0)  # edited after its site was made: the site's key is stale
    with pytest.raises(SiteError, match=r"weights changed after sites.sae"):
        minilm.features(ITEMS, [a], store=tmp_path, progress=False)


def test_an_extraction_hashes_each_sae_once(minilm, tmp_path, monkeypatch):
    """Checking an SAE site's key hashes the SAE's weights: once per extraction, not once per
    site reading that SAE nor once per window of a store run (each window is one compute call)."""
    sae = TinySae(minilm.dim, 40, seed=10)
    chosen = [sites.sae("encoder.2", sae), sites.sae("encoder.5", sae)]
    real_digest, hashed = sae_sites.module_digest, []

    def counted_digest(module):
        hashed.append(module)
        return real_digest(module)

    real_compute, windows = minilm.compute, []

    def counted_compute(items, *args, **kwargs):
        windows.append(len(items))
        return real_compute(items, *args, **kwargs)

    monkeypatch.setattr(sae_sites, "module_digest", counted_digest)
    monkeypatch.setattr(minilm, "compute", counted_compute)
    monkeypatch.setattr(store_run, "WINDOW_BYTES", 1)  # one shard of one item per window
    options = {"store": tmp_path / "a", "shard_size": 1, "progress": False}
    lazy = minilm.features(ITEMS, chosen, lazy=True, **options)
    assert windows == [1, 1, 1] and hashed == [sae]
    hashed.clear()
    stored = minilm.features(ITEMS, chosen, **{**options, "store": tmp_path / "b"})
    assert hashed == [sae] and len(windows) == 6
    hashed.clear()
    extract_shards(
        minilm, ITEMS, chosen, range(3), reading=Reading(), store=tmp_path / "c",
        store_dtype=None, shard_size=1,
    )  # fmt: skip
    assert hashed == [sae] and len(windows) == 9
    hashed.clear()
    in_memory = minilm.features(ITEMS, chosen, progress=False)
    assert hashed == [sae] and len(windows) == 10
    assert torch.equal(lazy.to_tensor(), stored)
    torch.testing.assert_close(stored, in_memory, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(in_memory[:, 1], naive_sae_features(minilm, sae, 5, "mean"))
    with torch.no_grad():
        sae.b_enc.add_(1.0)  # checked once still means checked: an edited SAE is refused
    with pytest.raises(SiteError, match=r"weights changed after sites.sae"):
        minilm.features(ITEMS, chosen, lazy=True, **{**options, "store": tmp_path / "d"})


def test_static_word_vectors_are_encoded_then_pooled():
    glove = load_subject("glove:6B.50d")
    sae = TinySae(glove.dim, 20, seed=5)
    item = SpanItem("the old grey cat sat", spans=((0, 12), (13, 20)))
    words = SpanItem(item.text, spans=((0, 3), (4, 7), (8, 12), (13, 16), (17, 20)))
    vectors = glove.features([words], progress=False)[0, 0].view(5, glove.dim)
    latents = sae.encode(vectors)
    want = torch.cat([latents[:3].mean(0), latents[3:].mean(0)])
    got = glove.features([item], [sites.sae("static.0", sae)], progress=False)
    torch.testing.assert_close(got[0, 0], want)


def test_mixed_widths_are_refused(minilm):
    sae = TinySae(minilm.dim, 24, seed=6)
    with pytest.raises(SiteError, match=r"differ in width"):
        minilm.features(ITEMS, [Site("encoder", 1), sites.sae("encoder.1", sae)], progress=False)


def test_lens_backend_reads_the_same_latents(minilm):
    lens = load_subject("sentence-transformers/all-MiniLM-L6-v2", backend="lens")
    sae = TinySae(minilm.dim, 12, seed=8)
    chosen = [sites.sae("encoder.4", sae), sites.sae("encoder.4.mlp_out", sae)]
    got = lens.features(ITEMS, chosen, progress=False)
    torch.testing.assert_close(
        got[:, 0], naive_sae_features(minilm, sae, 4, "mean"), atol=1e-4, rtol=1e-4
    )
    plain = lens.features(ITEMS, [Site("encoder", 4, "mlp_out")], progress=False)[:, 0]
    assert not torch.allclose(got[:, 1], got[:, 0])  # the other stream, encoded on its own
    assert got[:, 1].shape[1] == 2 * 12 and plain.shape[1] == 2 * minilm.dim


ANIMALS = ["dog", "cat", "horse", "rabbit", "tiger", "sheep", "goat", "mouse", "lion", "wolf"]
VEHICLES = ["car", "truck", "bus", "train", "bicycle", "plane", "boat", "tractor", "van", "taxi"]


def test_a_sparse_probe_finds_the_planted_latent(minilm):
    words = ANIMALS + VEHICLES
    items = [SpanItem(f"I saw the {w} today.", spans=((10, 10 + len(w)),)) for w in words]
    labels = torch.tensor([0] * len(ANIMALS) + [1] * len(VEHICLES))
    plain = minilm.features(items, [Site("encoder", 3)], progress=False)[:, 0]
    direction = plain[labels == 0].mean(0) - plain[labels == 1].mean(0)
    direction /= direction.norm()
    middle = (plain.mean(0) @ direction).item()
    sae = TinySae(minilm.dim, 64, seed=9)
    with torch.no_grad():  # latent 0 fires on animal words (their side of the class midpoint)
        sae.b_dec.zero_()
        sae.W_enc[:, 0] = 4 * direction
        sae.b_enc[0] = -4 * middle
    latents = minilm.features(items, [sites.sae("encoder.3", sae)], progress=False)[:, 0]
    fitted = fit_logistic_regression(
        latents.double()[None], labels[None], 0.2, penalty="l1", tol=1e-6, max_iter=20_000
    )
    assert np.flatnonzero(fitted.sklearn_params(0)[0][0]).tolist() == [0]  # that latent alone
