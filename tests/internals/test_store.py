"""Activation store: atomic shards, resume after an interruption, damaged shards recomputed."""

from __future__ import annotations

import pytest
import torch

from internals import SpanItem, sites, store_run

ITEMS = [
    SpanItem(f"Sentence number {i} talks about item {i * 7}.", spans=((0, 8),)) for i in range(9)
]


class CountingCompute:
    """Wraps `subject.compute`, counting calls and optionally interrupting call `fail_at`."""

    def __init__(self, subject, fail_at=None):
        self.subject, self.inner, self.fail_at, self.calls = subject, subject.compute, fail_at, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.fail_at is not None and self.calls == self.fail_at:
            raise KeyboardInterrupt
        return self.inner(*args, **kwargs)


@pytest.fixture
def counted(minilm, monkeypatch):
    def install(fail_at=None):
        counter = CountingCompute(minilm, fail_at)
        monkeypatch.setattr(minilm, "compute", counter)
        return counter

    return install


def run(subject, store, **kwargs):
    return subject.features(
        ITEMS, sites.every_layer(subject), store=store, shard_size=2, progress=False, **kwargs
    )


def test_interrupted_then_resumed_equals_uninterrupted(minilm, counted, tmp_path, monkeypatch):
    monkeypatch.setattr(store_run, "WINDOW_BYTES", 1)  # one shard per compute call
    clean = run(minilm, tmp_path / "clean")
    counter = counted(fail_at=3)
    with pytest.raises(KeyboardInterrupt):
        run(minilm, tmp_path / "resumed")
    assert counter.calls == 3
    counter = counted()
    resumed = run(minilm, tmp_path / "resumed")
    assert counter.calls == 3  # 5 shards, 2 were already written
    assert torch.equal(resumed, clean)
    assert not list((tmp_path / "resumed").rglob("*.tmp"))
    counter = counted()
    assert torch.equal(run(minilm, tmp_path / "resumed"), clean)
    assert counter.calls == 0


def test_truncated_shard_is_recomputed(minilm, counted, tmp_path):
    first = run(minilm, tmp_path)
    shard = sorted(tmp_path.rglob("encoder.3/shard-000001.safetensors"))[0]
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    counter = counted()
    again = run(minilm, tmp_path)
    assert counter.calls == 1
    assert torch.equal(again, first)


def test_new_sites_compute_only_what_is_missing(minilm, counted, tmp_path):
    minilm.features(ITEMS, sites.last(minilm), store=tmp_path, shard_size=4, progress=False)
    counter = counted()
    both = minilm.features(
        ITEMS, sites.every_layer(minilm), store=tmp_path, shard_size=4, progress=False
    )
    assert counter.calls == 1  # the three shards miss the same sites: one window, one call
    torch.testing.assert_close(both, minilm.features(ITEMS, progress=False), rtol=1e-5, atol=1e-5)


def test_a_window_of_shards_is_computed_in_one_call(minilm, counted, tmp_path, monkeypatch):
    every = sites.every_layer(minilm)
    per_shard = 2 * len(every) * minilm.dim * 4  # float32 bytes of a shard of 2 items
    monkeypatch.setattr(store_run, "WINDOW_BYTES", 2 * per_shard)  # windows of two shards
    counter = counted()
    windowed = run(minilm, tmp_path / "windows")
    assert counter.calls == 3  # 5 shards: windows {0, 1}, {2, 3}, {4}
    assert len(list((tmp_path / "windows").rglob("encoder.0/shard-*.safetensors"))) == 5
    counter = counted()
    assert torch.equal(run(minilm, tmp_path / "windows", lazy=True).to_tensor(), windowed)
    assert counter.calls == 0
    # the rows of a window are computed together: equal to computing those items alone
    alone = minilm.features(ITEMS[:4], every, progress=False)
    assert torch.equal(windowed[:4], alone)


def test_float16_store_returns_the_stored_values_every_time(minilm, tmp_path):
    first = run(minilm, tmp_path, store_dtype=torch.float16)
    second = run(minilm, tmp_path, store_dtype=torch.float16)
    assert torch.equal(first, second)
    assert first.dtype == torch.float32
    full = minilm.features(ITEMS, progress=False)
    torch.testing.assert_close(first, full, rtol=1e-2, atol=1e-2)


def test_different_data_or_pooling_use_different_shards(minilm, tmp_path):
    run(minilm, tmp_path)
    run(minilm, tmp_path, pool="max")
    assert len([p for p in (tmp_path / minilm.content_key()).iterdir() if p.is_dir()]) == 2
