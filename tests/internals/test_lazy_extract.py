"""`subject.features(..., store=DIR, lazy=True)`: a `FeatureSet` over the store's shards whose
values equal the in-memory features, bit for bit, on the models the other extraction tests use."""

from __future__ import annotations

import itertools

import pytest
import torch

from internals import FeatureSet, FeatureSetError, SpanItem, load_subject, sites
from tests.tiny_models import random_gpt2

SENTENCES = [
    "The cat sat on the mat .",
    "A dog barked at the old postman today .",
    "Birds sing .",
    "She reads long books slowly and carefully on Sundays .",
]


def words(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for word in text.split(" "):
        spans.append((start, start + len(word)))
        start += len(word) + 1
    return spans


WORDS = [SpanItem(t, spans=(s,)) for t in SENTENCES for s in words(t)]
PAIRS = [SpanItem(t, spans=(a, b)) for t in SENTENCES for a, b in itertools.pairwise(words(t))]


@pytest.fixture(scope="module")
def glove():
    return load_subject("glove:6B.50d")


@pytest.fixture(scope="module")
def gpt2(bpe_tokenizer):
    return load_subject(random_gpt2(bpe_tokenizer, layers=3, width=64), tokenizer=bpe_tokenizer)


@pytest.mark.parametrize("name", ["minilm", "glove", "gpt2"])
def test_lazy_equals_the_in_memory_features(name, request, tmp_path):
    subject = request.getfixturevalue(name)
    every = sites.every_layer(subject)
    in_memory = subject.features(WORDS, every, progress=False)
    stored = subject.features(WORDS, every, store=tmp_path, shard_size=4, progress=False)
    fs = subject.features(WORDS, every, store=tmp_path, shard_size=4, progress=False, lazy=True)
    fresh = subject.features(
        WORDS, every, store=tmp_path / "fresh", shard_size=4, progress=False, lazy=True
    )
    assert isinstance(fs, FeatureSet)
    assert fs.shape == tuple(in_memory.shape) and fs.site_names == tuple(s.name for s in every)
    assert torch.equal(fs.to_tensor(), stored)  # read back from the shards the first call wrote
    assert torch.equal(fresh.to_tensor(), stored)  # computed by the lazy call itself
    assert fresh.key == fs.key
    # the store computes shard by shard (batches of other lengths): equal within float32 noise
    torch.testing.assert_close(fs.to_tensor(), in_memory, rtol=1e-5, atol=1e-5)
    whole = subject.features(
        WORDS, every, store=tmp_path / "one", shard_size=len(WORDS), progress=False, lazy=True
    )
    assert torch.equal(whole.to_tensor(), in_memory)  # one shard: the in-memory batches


def test_lazy_reopens_and_reads_sites_and_items(minilm, tmp_path):
    chosen = sites.resolve(minilm, "2,4,6")
    fs = minilm.features(PAIRS, chosen, store=tmp_path, shard_size=5, progress=False, lazy=True)
    reference = minilm.features(PAIRS, chosen, store=tmp_path, shard_size=5, progress=False)
    assert fs.shape == (len(PAIRS), 3, 2 * 384)  # two spans side by side
    again = FeatureSet.open(fs.index_path)
    assert torch.equal(again[3:11, [2, 0]], reference[3:11][:, [2, 0]])
    assert torch.equal(again.read([1], [0, len(PAIRS) - 1]), reference[[0, -1]][:, [1]])
    assert again.index.meta["name"] == minilm.name


def test_lazy_float16_store_reads_the_stored_values(minilm, tmp_path):
    last = sites.last(minilm)
    options = {"store": tmp_path, "store_dtype": torch.float16, "shard_size": 6}
    fs = minilm.features(WORDS, last, progress=False, lazy=True, **options)
    assert fs.dtype == torch.float16
    assert torch.equal(fs.to_tensor(), minilm.features(WORDS, last, progress=False, **options))


def test_lazy_keeps_rows_another_item_list_stored(glove, tmp_path):
    glove.features(WORDS, store=tmp_path, shard_size=4, progress=False)
    subset = WORDS[5:12]
    fs = glove.features(subset, store=tmp_path, shard_size=4, progress=False, lazy=True)
    assert torch.equal(fs.to_tensor(), glove.features(subset, progress=False))
    assert len(list(fs.folder.rglob("shard-*.safetensors"))) == 2  # saved beside its index


def test_a_damaged_shard_is_refused_then_recomputed_by_a_rerun(minilm, tmp_path):
    last = sites.last(minilm)
    fs = minilm.features(WORDS, last, store=tmp_path, shard_size=4, progress=False, lazy=True)
    clean = fs.to_tensor()
    shard = sorted(fs.folder.rglob("shard-000002.safetensors"))[0]
    data = bytearray(shard.read_bytes())
    data[-3] ^= 0x10
    shard.write_bytes(bytes(data))
    with pytest.raises(FeatureSetError, match=r"shard-000002\.safetensors is damaged \(checksum"):
        fs.to_tensor()
    again = minilm.features(WORDS, last, store=tmp_path, shard_size=4, progress=False, lazy=True)
    assert torch.equal(again.to_tensor(), clean)


def test_each_site_selection_gets_its_own_index(glove, minilm, tmp_path):
    two = minilm.features(WORDS, [1, 2], store=tmp_path, shard_size=8, progress=False, lazy=True)
    one = minilm.features(WORDS, [2], store=tmp_path, shard_size=8, progress=False, lazy=True)
    assert two.index_path != one.index_path and two.folder == one.folder
    assert torch.equal(two[:, 1], one[:, 0])


@pytest.mark.parametrize("lazy", [True, False], ids=["lazy", "in-memory-from-store"])
def test_one_window_is_held_while_the_next_is_computed(glove, tmp_path, monkeypatch, lazy):
    """Each window's computed rows are freed before the next window is computed (a shard the
    caller still held would keep its whole window alive), with served rows mixed in."""
    import weakref

    from internals import store_run

    subject = load_subject("glove:6B.50d")  # its own instance: `compute` is patched
    subject.features(WORDS[:3], store=tmp_path, shard_size=2, progress=False)  # rows to serve
    monkeypatch.setattr(store_run, "WINDOW_BYTES", 2 * 2 * 50 * 4)  # two shards of two items
    alive: list[weakref.ref] = []
    inner = subject.compute

    def compute(items, *args, **kwargs):
        assert all(ref() is None for ref in alive), "an earlier window is still held"
        rows = inner(items, *args, **kwargs).numpy().copy()  # a tensor's views keep this alive
        alive.append(weakref.ref(rows))
        return torch.from_numpy(rows)

    monkeypatch.setattr(subject, "compute", compute)
    out = subject.features(WORDS, store=tmp_path, shard_size=2, progress=False, lazy=lazy)
    assert len(alive) == len(WORDS) // 4 + 1  # one call per window of four items
    expected = glove.features(WORDS, progress=False)
    assert torch.equal(out.to_tensor() if lazy else out, expected)
