"""Verified shards: a damaged, foreign or old-format shard is logged and recomputed, never served;
random byte flips give either that or bit-identical features; crash leftovers are removed; files
follow the umask."""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
import time
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.torch import load_file, save_file

from internals import SpanItem, load_subject

WORDS = ["cat", "dog", "bird", "fish", "horse", "mouse", "snake", "frog"]
ITEMS = [SpanItem(f"the {w} and the {v}", spans=((4, 4 + len(w)),)) for w in WORDS for v in WORDS]


@pytest.fixture(scope="module")
def subject(tmp_path_factory):
    folder = tmp_path_factory.mktemp("vectors")
    rows = [
        f"{w} " + " ".join(f"{(i * 7 + j) % 11 / 3:.4f}" for j in range(6))
        for i, w in enumerate(["the", "and", *WORDS])
    ]
    (folder / "v.txt").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return load_subject(f"glove:{folder / 'v.txt'}")


def features(subject, store):
    return subject.features(ITEMS, store=store, shard_size=16, progress=False)


class Recorder(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@pytest.fixture
def recorder():
    handler = Recorder()
    logger = logging.getLogger("internals.store")
    logger.addHandler(handler)
    old = logger.level
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(old)


def shards(store: Path) -> list[Path]:
    return sorted(store.rglob("shard-*.safetensors"))


def test_flipped_data_byte_is_recomputed_and_logged(subject, tmp_path, recorder):
    clean = features(subject, tmp_path)
    shard = shards(tmp_path)[1]
    data = bytearray(shard.read_bytes())
    data[-3] ^= 0x10  # inside the tensor's bytes
    shard.write_bytes(bytes(data))
    assert torch.equal(features(subject, tmp_path), clean)
    assert any("checksum mismatch" in m and shard.name in m for m in recorder.messages)
    assert torch.equal(features(subject, tmp_path), clean)  # rewritten: verifies again


def test_shard_copied_from_another_shard_is_refused(subject, tmp_path, recorder):
    clean = features(subject, tmp_path)
    first, second = shards(tmp_path)[:2]
    shutil.copyfile(first, second)  # same shape and dtype, other rows
    assert torch.equal(features(subject, tmp_path), clean)
    assert any("belongs to" in m for m in recorder.messages)


def test_shard_without_a_checksum_is_recomputed(subject, tmp_path, recorder):
    clean = features(subject, tmp_path)
    shard = shards(tmp_path)[0]
    tensor = load_file(shard)["features"]
    save_file({"features": tensor + 1}, shard)  # what a store before checksums would hold
    assert torch.equal(features(subject, tmp_path), clean)
    assert any("no checksum" in m for m in recorder.messages)


def test_leftover_temporary_files_are_removed(subject, tmp_path, recorder):
    features(subject, tmp_path)
    folder = shards(tmp_path)[0].parent
    host = socket.gethostname().replace(".", "-")
    dead = folder / f".shard-000000.safetensors.{host}.999999999.ab12.tmp"
    old = folder / ".shard-000001.safetensors.elsewhere.1.cd34.tmp"
    live = folder / f".shard-000002.safetensors.{host}.{os.getpid()}.ef56.tmp"
    for path in (dead, old, live):
        path.write_bytes(b"partial")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    features(subject, tmp_path)
    assert not dead.exists() and not old.exists()
    assert live.exists()  # a live writer's file is left alone
    assert sum("interrupted run" in m for m in recorder.messages) == 2


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_files_follow_the_umask(subject, tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        features(subject, tmp_path)
    finally:
        os.umask(old)
    files = [*shards(tmp_path), *tmp_path.rglob("meta.json")]
    assert files and {p.stat().st_mode & 0o777 for p in files} == {mode}


@pytest.fixture(scope="module")
def pristine(subject, tmp_path_factory):
    store = tmp_path_factory.mktemp("pristine")
    return store, features(subject, store)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_random_byte_flips_are_detected_or_harmless(subject, pristine, data):
    store, clean = pristine
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "store"
        shutil.copytree(store, copy)
        shard = data.draw(st.sampled_from(shards(copy)), label="shard")
        original = shard.read_bytes()
        raw = bytearray(original)
        flips = data.draw(
            st.lists(
                st.tuples(st.integers(0, len(raw) - 1), st.integers(1, 255)),
                min_size=1,
                max_size=4,
            ),
            label="flips",
        )
        for position, mask in flips:
            raw[position] ^= mask
        shard.write_bytes(bytes(raw))
        handler = Recorder()
        logger = logging.getLogger("internals.store")
        logger.addHandler(handler)
        try:
            got = features(subject, copy)
        finally:
            logger.removeHandler(handler)
        assert torch.equal(got, clean), f"different features, log: {handler.messages}"
        damaged = [m for m in handler.messages if "is damaged" in m]
        data_start = 8 + int.from_bytes(original[:8], "little")  # after the JSON header
        if raw[data_start:] != original[data_start:]:
            assert damaged, "a changed data byte was served without a log line"
