"""One model's extraction split across Ray workers by items, into one store: the feature set
equals a single-process lazy extraction of the same items, bit for bit."""

from __future__ import annotations

import json

import pytest
import torch

from internals import FeatureSet, SpanItem, load_subject, store_run
from suites.sweep.config import ModelSpec
from suites.sweep.ray_extract import extract_on_ray, runs
from suites.sweep.worker import unit_threads

pytest.importorskip("ray")

SENTENCES = [
    "The cat sat on the mat .",
    "A dog barked at the old postman today .",
    "Birds sing .",
    "She reads long books slowly and carefully on Sundays .",
]
WORDS = [
    SpanItem(text, spans=((start, start + len(word)),))
    for text in SENTENCES
    for start, word in zip(
        [sum(len(w) + 1 for w in text.split(" ")[:i]) for i in range(len(text.split(" ")))],
        text.split(" "),
        strict=True,
    )
]


def test_runs_are_whole_shards_one_per_worker():
    assert runs(10, 4, 2) == [range(0, 8), range(8, 10)]
    assert runs(10, 4, 3) == [range(0, 4), range(4, 8), range(8, 10)]
    assert runs(10, 4, 8) == [range(0, 4), range(4, 8), range(8, 10)]  # no worker without items
    assert runs(3, 4, 2) == [range(0, 3)]


def test_runs_are_whole_windows_of_shards():
    assert runs(28, 4, 2, window=2) == [range(0, 16), range(16, 28)]
    assert runs(28, 4, 3, window=2) == [range(0, 16), range(16, 28)]  # 4 windows, 2 each
    assert runs(28, 4, 4, window=2) == [range(0, 8), range(8, 16), range(16, 24), range(24, 28)]
    assert runs(10, 4, 2, window=8) == [range(0, 10)]  # one window: one worker


@pytest.mark.slow
def test_two_workers_write_one_store_equal_to_one_process(ray_instance, tmp_path, monkeypatch):
    layers = [1, 3, 6]
    window = 2 * 4 * len(layers) * 384 * 4  # windows of two shards: runs of 16 and 12 words
    fs = extract_on_ray(
        ModelSpec("minilm", "minilm"), WORDS, layers, tmp_path / "store", workers=2,
        shard_size=4, window_bytes=window,
    )  # fmt: skip
    monkeypatch.setattr(store_run, "WINDOW_BYTES", window)  # one process, the same windows
    with unit_threads(1):  # the workers' thread count: the same float reductions
        minilm = load_subject("minilm")
        alone = minilm.features(
            WORDS, layers, store=tmp_path / "alone", shard_size=4, progress=False, lazy=True
        )
    assert isinstance(fs, FeatureSet) and fs.shape == alone.shape == (len(WORDS), 3, 384)
    assert fs.site_names == alone.site_names
    assert torch.equal(fs.to_tensor(), alone.to_tensor())
    # the workers wrote the whole list's shards into one folder, each shard once
    lists = [json.loads(p.read_text()) for p in (tmp_path / "store").glob("*/*/meta.json")]
    assert [m["items"] for m in lists] == [len(WORDS)]
    shards = sorted(p.relative_to(fs.folder) for p in fs.folder.glob("*/shard-*.safetensors"))
    assert len(shards) == 3 * -(-len(WORDS) // 4) == 3 * fs.index.shards
    assert fs.index.owner == alone.index.owner  # the same folder a single process writes
