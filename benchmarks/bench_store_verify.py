"""The cost of "never a wrong number": verified shards, content keys and checkpoint digests.

1. A cached extraction (every shard already stored) of an EWT-dev-sized store, 25,000 word items
   x 7 sites x 384 dims (269 MB), keyed like MiniLM (a digest of its 22.7M weights), against
   the store as it was before (a path-based key, shards checked for shape only). Goal: <= 1.05x.
2. Digesting a 500 MB checkpoint file the first time (XXH3-128) against the remembered digest
   (a stat call), and against hashing it with hashlib.sha256, what a user would otherwise do.

Items are EWT dev's words when `$LINGPROBE_DATA` holds ud_english_ewt/, else synthetic sentences
of the same count and shape. Every comparison is timed in the same run and printed as a ratio.
"""

from __future__ import annotations

import hashlib
import os
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
import safetensors.torch
import torch
from torch import Tensor

import internals.content_hash as content_hash
import lingprobe.shards as shard_format
from benchmarks.figures import Figures
from internals import SpanItem, Subject, load_subject
from internals.content_hash import module_digest
from internals.sites import Site
from internals.store import fingerprint, shard_checksum

N_ITEMS, LAYERS, DIM = 25_000, 6, 384  # EWT dev has 25,148 words; MiniLM: 7 sites x 384
CHECKPOINT_MB = 500
ROUNDS = 5


def timed(fn: Callable[[], object], rounds: int = 3) -> float:
    """Median wall seconds of `rounds` calls after one warm-up call."""
    fn()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def word_items(n: int) -> list[SpanItem]:
    """EWT dev's words (with `$LINGPROBE_DATA`), else synthetic sentences, `n` items."""
    data = os.environ.get("LINGPROBE_DATA")
    dev = Path(data) / "ud_english_ewt" / "en_ewt-ud-dev.conllu" if data else None
    items: list[SpanItem] = []
    if dev is not None and dev.is_file():
        from suites.readers.conllu import read_sentences

        for sentence in read_sentences(dev):
            items += [SpanItem(sentence.text, spans=((w.start, w.end),)) for w in sentence.words]
    rng = np.random.default_rng(0)
    while len(items) < n:
        words = [f"w{rng.integers(5000)}" for _ in range(int(rng.integers(5, 30)))]
        text = " ".join(words)
        starts = np.cumsum([0] + [len(w) + 1 for w in words[:-1]])
        items += [SpanItem(text, spans=((int(s), int(s) + len(w)),)) for s, w in zip(starts, words)]
    return items[:n]


class StoredSubject(Subject):
    """A MiniLM-shaped subject whose features are seeded noise (the store is what is timed);
    its store key digests a real model's weights, as `TransformerSubject.content_key` does."""

    def __init__(self, weights: torch.nn.Module) -> None:
        self.name, self.init, self.kind, self.dim = "stored", "pretrained", "encoder", DIM
        self.fingerprint, self.device, self.model = "bench-stored", torch.device("cpu"), weights

    @property
    def part_layers(self) -> dict[str, int]:
        return {"encoder": LAYERS}

    def compute(self, items: Sequence[SpanItem], sites: Sequence[Site], pool, bar) -> Tensor:
        gen = torch.Generator().manual_seed(len(items))
        return torch.randn(len(items), len(sites), DIM, generator=gen)

    def content_key(self) -> str:
        return fingerprint({"loaded": self.fingerprint, "weights": module_digest(self.model)})


def shape_only(meta, tensor, key, shape, dtype):  # the check before verification existed
    return None if tuple(tensor.shape) == shape else "shape"


@pytest.mark.quick
def test_cached_extraction_verified_vs_unverified(figures: Figures, tmp_path, monkeypatch):
    minilm = load_subject("sentence-transformers/all-MiniLM-L6-v2")
    subject, items = StoredSubject(minilm.model), word_items(N_ITEMS)
    store = tmp_path / "store"

    def cached() -> Tensor:
        return subject.features(items, store=store, progress=False)

    def unverified() -> Tensor:
        with monkeypatch.context() as patch:
            patch.setattr(shard_format, "_problem", shape_only)
            patch.setattr(StoredSubject, "content_key", lambda self: self.fingerprint)
            return cached()

    cached(), unverified()  # fill both stores (the old key has its own shards)
    verified_times, unverified_times = [], []
    for _ in range(ROUNDS):  # interleaved, so load changes on the shared machine hit both
        for fn, times in ((cached, verified_times), (unverified, unverified_times)):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    t_verified, t_before = statistics.median(verified_times), statistics.median(unverified_times)
    shards = sorted(store.rglob("shard-*.safetensors"))
    tensors = [safetensors.torch.load_file(p)["features"] for p in shards]
    t_checksums = timed(lambda: [shard_checksum(t) for t in tensors])
    t_digest = timed(lambda: module_digest(minilm.model))
    size = sum(t.numel() * t.element_size() for t in tensors) / 2**20 / 2
    print(
        f"\n[store] cached extraction, {len(items)} items x {LAYERS + 1} sites x {DIM}"
        f" ({size:.0f} MB of features), median of {ROUNDS} interleaved rounds,"
        f" load {os.getloadavg()[0]:.2f}"
    )
    print(f"  unverified (path key, shape check)   {t_before:8.3f} s")
    print(
        f"  verified (content key, checksums)    {t_verified:8.3f} s   "
        f"{t_verified / t_before:.3f}x end to end (goal <= 1.05)"
    )
    added = t_checksums / 2 + t_digest  # half the shards belong to the verified store
    print(
        f"  added work: shard checksums {t_checksums / 2:.3f} s + MiniLM weight digest"
        f" {t_digest:.3f} s = {added / t_before:.1%} of the unverified time"
    )
    figures.record(
        ratio=t_verified / t_before,
        against="the store without verification (path key, shape check only)",
        at_most=1.05,
        times={"verified": t_verified, "unverified": t_before, "checksums": t_checksums},
        weight_digest_s=t_digest,
    )


def write_random_file(path: Path, megabytes: int) -> None:
    rng = np.random.default_rng(0)
    with path.open("wb") as handle:
        for _ in range(megabytes // 16):
            handle.write(rng.integers(0, 256, 16 * 2**20, dtype=np.uint8).tobytes())


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 24), b""):
            digest.update(chunk)
    return digest.hexdigest()


@pytest.mark.quick
@pytest.mark.parametrize("megabytes", [CHECKPOINT_MB])
def test_checkpoint_digest_first_vs_cached(figures: Figures, tmp_path, monkeypatch, megabytes):
    monkeypatch.setenv("LINGPROBE_CACHE", str(tmp_path / "cache"))
    checkpoint = tmp_path / "model.safetensors"
    write_random_file(checkpoint, megabytes)

    def first() -> str:
        monkeypatch.setattr(content_hash, "_MEMORY", {})
        for record in (tmp_path / "cache").rglob("*.json"):
            record.unlink()
        return content_hash.cached_file_digest(checkpoint)

    def from_disk_record() -> str:
        monkeypatch.setattr(content_hash, "_MEMORY", {})
        return content_hash.cached_file_digest(checkpoint)

    t_first = timed(first)
    t_record = timed(from_disk_record, rounds=20)
    t_memory = timed(lambda: content_hash.cached_file_digest(checkpoint), rounds=20)
    t_sha = timed(lambda: sha256_file(checkpoint))
    figures.record(
        ratio=t_sha / t_first,
        against="hashlib.sha256 of the checkpoint (the first digest; later ones are remembered)",
        at_least=1.0,
        times={"first": t_first, "record": t_record, "memory": t_memory, "sha256": t_sha},
    )
    print(f"\n[digest] {megabytes} MB checkpoint (page cache warm), load {os.getloadavg()[0]:.2f}")
    print(f"  first digest (XXH3-128)          {t_first:9.4f} s")
    print(
        f"  remembered, new process (record) {t_record:9.5f} s   {t_first / t_record:,.0f}x"
        " faster than the first"
    )
    print(f"  remembered, same process         {t_memory:9.6f} s   {t_first / t_memory:,.0f}x")
    print(f"  hashlib.sha256 of the file       {t_sha:9.4f} s   XXH3 {t_sha / t_first:.1f}x faster")
