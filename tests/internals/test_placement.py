"""Models split between CPU and disk (accelerate offload) give the single-device features.

Multi-GPU maps run the same code with GPU ids in the map; they need CUDA and are not tested here.
"""

from __future__ import annotations

import copy

import pytest
import torch

from internals import Site, SiteError, load_subject, sites
from internals.errors import UnsupportedModelError
from internals.placement import dispatch, is_dispatched, named_tensors
from tests.internals.test_equivalence import ITEMS, PAIRS
from tests.tiny_models import random_bert, random_llama

TOL = {"rtol": 1e-5, "atol": 1e-5}
LLAMA_MAP = {
    "embed_tokens": "cpu",
    "layers.0": "cpu",
    "layers.1": "disk",
    "layers.2": "disk",
    "layers.3": "cpu",
    "norm": "disk",
    "rotary_emb": "cpu",
}
BERT_MAP = {
    "embeddings": "disk",
    "encoder.layer.0": "cpu",
    "encoder.layer.1": "disk",
    "encoder.layer.2": "cpu",
    "pooler": "disk",
}


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory, bpe_tokenizer):
    folder = tmp_path_factory.mktemp("llama")
    random_llama(bpe_tokenizer, layers=4).model.save_pretrained(folder)  # the backbone alone
    bpe_tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory, minilm_tokenizer):
    folder = tmp_path_factory.mktemp("bert")
    random_bert(minilm_tokenizer, layers=3, width=64).save_pretrained(folder)
    minilm_tokenizer.save_pretrained(folder)
    return folder


def features(subject, items=ITEMS):
    return subject.features(items, sites.every_layer(subject), progress=False)


def offloaded(model) -> int:
    return sum(p.device.type == "meta" for p in model.parameters())


@pytest.mark.parametrize(
    ("folder", "device_map"), [("llama_dir", LLAMA_MAP), ("bert_dir", BERT_MAP)]
)
def test_cpu_and_disk_split_equals_one_device(request, tmp_path, folder, device_map):
    path = request.getfixturevalue(folder)
    whole = load_subject(str(path))
    split = load_subject(str(path), device_map=device_map, offload_folder=tmp_path / "offload")
    assert is_dispatched(split.model) and offloaded(split.model) > 0
    assert split.part_layers == whole.part_layers
    torch.testing.assert_close(features(split), features(whole), **TOL)
    if whole.kind == "encoder":
        torch.testing.assert_close(features(split, PAIRS), features(whole, PAIRS), **TOL)
    assert split.fingerprint == whole.fingerprint  # same weights, same numbers
    part, n = next(iter(split.part_layers.items()))
    with pytest.raises(SiteError, match=f"layer {n + 1} does not exist"):
        split.features(ITEMS, [Site(part, n + 1)], progress=False)


def test_auto_map_under_a_memory_cap_offloads_to_disk(llama_dir, tmp_path):
    whole = load_subject(str(llama_dir))
    capped = load_subject(
        str(llama_dir), device_map="auto", max_memory={"cpu": "200KB"}, offload_folder=tmp_path
    )
    assert "disk" in set(capped.model.hf_device_map.values())
    torch.testing.assert_close(features(capped), features(whole), **TOL)


def test_model_objects_are_dispatched_or_taken_as_they_are(bpe_tokenizer, tmp_path):
    model = random_llama(bpe_tokenizer, layers=4).model
    whole = load_subject(copy.deepcopy(model), tokenizer=bpe_tokenizer)
    want = features(whole)
    placed = load_subject(
        copy.deepcopy(model),
        tokenizer=bpe_tokenizer,
        device_map=LLAMA_MAP,
        offload_folder=tmp_path / "a",
    )
    assert offloaded(placed.model) > 0
    torch.testing.assert_close(features(placed), want, **TOL)
    ready = dispatch(
        copy.deepcopy(model), LLAMA_MAP, max_memory=None, offload_folder=tmp_path / "b"
    )
    taken = load_subject(ready, tokenizer=bpe_tokenizer)
    assert taken.model is ready
    torch.testing.assert_close(features(taken), want, **TOL)
    assert taken.fingerprint == placed.fingerprint == whole.fingerprint
    real = dict(named_tensors(ready))
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(real[name], tensor, rtol=0, atol=0)
    with pytest.raises(UnsupportedModelError, match="before it is dispatched"):
        load_subject(ready, tokenizer=bpe_tokenizer, init="random")
    with pytest.raises(UnsupportedModelError, match="backend='lens'"):
        load_subject(ready, tokenizer=bpe_tokenizer, backend="lens")
    with pytest.raises(ValueError, match="offload_folder"):
        dispatch(copy.deepcopy(model), LLAMA_MAP, max_memory=None, offload_folder=None)


def test_a_random_twin_can_be_split_too(bert_dir, tmp_path):
    alone = load_subject(str(bert_dir), init="random", seed=5)
    split = load_subject(
        str(bert_dir), init="random", seed=5, device_map=BERT_MAP, offload_folder=tmp_path
    )
    assert offloaded(split.model) > 0
    torch.testing.assert_close(features(split), features(alone), **TOL)
