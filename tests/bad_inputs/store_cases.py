"""Store settings refused, and shards damaged on disk: each one logged and recomputed."""

from __future__ import annotations

import os
import re
import shutil
import socket
from collections.abc import Callable
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from internals import SpanItem, load_subject
from internals.errors import OptionError
from tests.bad_inputs.case import Case, Env, store_log

ITEMS = [
    SpanItem("the cat sat", spans=((4, 7),)),
    SpanItem("a dog barked", spans=((2, 5),)),
    SpanItem("the dog sat on the mat", spans=((19, 22),)),
    SpanItem("a cat barked .", spans=((2, 5),)),
]


def stored(subject, store: Path, **options) -> torch.Tensor:
    return subject.features(ITEMS, store=store, shard_size=2, progress=False, **options)


def recomputed(damage: Callable[[Env, list[Path]], None], logged: str) -> Callable[[Env], None]:
    """Fill a store, damage its shards, read again: the same features and a log line."""

    def run(env: Env) -> None:
        store = env.tmp()
        clean = stored(env.static, store)
        damage(env, sorted(store.rglob("shard-*.safetensors")))
        with store_log() as messages:
            again = stored(env.static, store)
        assert torch.equal(again, clean), "different features were served"
        assert any(re.search(logged, m) for m in messages), f"no log line: {messages}"

    return run


def flip_data_byte(env: Env, shards: list[Path]) -> None:
    data = bytearray(shards[1].read_bytes())
    data[-2] ^= 0x04
    shards[1].write_bytes(bytes(data))


def truncate(env: Env, shards: list[Path]) -> None:
    shards[0].write_bytes(shards[0].read_bytes()[:100])


def copy_first_over_second(env: Env, shards: list[Path]) -> None:
    shutil.copyfile(shards[0], shards[1])


def retype_header(env: Env, shards: list[Path]) -> None:
    shards[0].write_bytes(shards[0].read_bytes().replace(b'"F32"', b'"I32"', 1))


def drop_checksum(env: Env, shards: list[Path]) -> None:
    save_file({"features": load_file(shards[0])["features"] * 2}, shards[0])


def empty_file(env: Env, shards: list[Path]) -> None:
    shards[1].write_bytes(b"")


def shard_of_another_subject(env: Env, shards: list[Path]) -> None:
    other_file = env.tmp() / "other.txt"
    other_file.write_text(env.vectors_file.read_text().replace("0.25", "0.75"), encoding="utf-8")
    other_store = env.tmp()
    stored(load_subject(f"glove:{other_file}"), other_store)
    shutil.copyfile(sorted(other_store.rglob("shard-*.safetensors"))[0], shards[0])


def leftover_tmp(env: Env) -> None:
    store = env.tmp()
    stored(env.static, store)
    folder = sorted(store.rglob("shard-*.safetensors"))[0].parent
    host = socket.gethostname().replace(".", "-")
    leftover = folder / f".shard-000000.safetensors.{host}.999999999.beef.tmp"
    leftover.write_bytes(b"half a shard")
    with store_log() as messages:
        stored(env.static, store)
    assert not leftover.exists(), "the leftover was kept"
    assert any("interrupted run" in m for m in messages), messages


def overwritten_checkpoint(env: Env) -> None:
    folder, store = env.tmp(), env.tmp()
    for name in os.listdir(env.bert_folder):
        shutil.copy(env.bert_folder / name, folder / name)
    old = load_subject(str(folder)).features(ITEMS, store=store, progress=False)
    model = env.bert_model()
    with torch.no_grad():
        model.encoder.layer[-1].output.dense.bias.add_(0.5)
    model.save_pretrained(folder)
    subject = load_subject(str(folder))
    new = subject.features(ITEMS, store=store, progress=False)
    assert torch.equal(new, subject.features(ITEMS, progress=False)), "old features served"
    assert not torch.equal(new, old)


def edited_last_value(env: Env) -> None:
    model, store = env.bert_model(), env.tmp()
    subject = load_subject(model, tokenizer=env.tokenizer)
    old = subject.features(ITEMS, store=store, progress=False)
    with torch.no_grad():
        model.encoder.layer[-1].output.dense.weight.data.view(-1)[-1] += 1.0
    new = subject.features(ITEMS, store=store, progress=False)
    assert torch.equal(new, subject.features(ITEMS, progress=False)), "old features served"
    assert not torch.equal(new, old)


def store_on_a_file(env: Env) -> None:
    path = env.tmp() / "store"
    path.write_text("not a folder")
    stored(env.static, path)


STORE = [
    Case(
        "store-shard-size-zero",
        "shard_size=0",
        "OptionError: a whole number >= 1",
        lambda env: env.static.features(ITEMS, store=env.tmp(), shard_size=0, progress=False),
        OptionError,
        r"shard_size=0: give a whole number of items per shard, at least 1",
    ),
    Case(
        "store-shard-size-negative",
        "shard_size=-5",
        "OptionError: at least 1",
        lambda env: env.static.features(ITEMS, store=env.tmp(), shard_size=-5, progress=False),
        OptionError,
        r"shard_size=-5",
    ),
    Case(
        "store-shard-size-float",
        "shard_size=2.5",
        "OptionError: a whole number",
        lambda env: env.static.features(ITEMS, store=env.tmp(), shard_size=2.5, progress=False),
        OptionError,
        r"shard_size=2\.5",
        typed=True,
    ),
    Case(
        "store-dtype-int8",
        "store_dtype=torch.int8",
        "OptionError: would round features away",
        lambda env: stored(env.static, env.tmp(), store_dtype=torch.int8),
        OptionError,
        r"store_dtype=torch\.int8 would not keep features as real numbers",
    ),
    Case(
        "store-dtype-bool",
        "store_dtype=torch.bool",
        "OptionError: give a float dtype",
        lambda env: stored(env.static, env.tmp(), store_dtype=torch.bool),
        OptionError,
        r"store_dtype=torch\.bool .* torch\.float16",
    ),
    Case(
        "store-pool-unknown",
        'pool="median"',
        "OptionError: choose a pooling",
        lambda env: stored(env.static, env.tmp(), pool="median"),
        OptionError,
        r"pool='median' is not a pooling",
        typed=True,
    ),
    Case(
        "store-is-a-file",
        "store= an existing file",
        "OptionError: give a folder",
        store_on_a_file,
        OptionError,
        r"is a file; give a folder for the store",
    ),
    Case(
        "shard-bit-flip",
        "one data byte of a shard flipped",
        "recomputed; log 'checksum mismatch'",
        recomputed(flip_data_byte, "checksum mismatch"),
        None,
        "",
    ),
    Case(
        "shard-truncated",
        "a shard cut to 100 bytes",
        "recomputed; log 'unreadable'",
        recomputed(truncate, "is damaged .*unreadable"),
        None,
        "",
    ),
    Case(
        "shard-empty",
        "a shard emptied",
        "recomputed; log 'unreadable'",
        recomputed(empty_file, "is damaged .*unreadable"),
        None,
        "",
    ),
    Case(
        "shard-copied",
        "shard 0 copied over shard 1 (same shape)",
        "recomputed; log 'belongs to'",
        recomputed(copy_first_over_second, r"belongs to '.*/000000'"),
        None,
        "",
    ),
    Case(
        "shard-other-subject",
        "a shard from another subject's store",
        "recomputed; log 'belongs to'",
        recomputed(shard_of_another_subject, "belongs to"),
        None,
        "",
    ),
    Case(
        "shard-retyped",
        'header dtype "F32" edited to "I32"',
        "recomputed; log 'expected torch.float32'",
        recomputed(retype_header, r"expected torch\.float32"),
        None,
        "",
    ),
    Case(
        "shard-no-checksum",
        "a shard without key and checksum (older store)",
        "recomputed; log 'no checksum'",
        recomputed(drop_checksum, "no checksum"),
        None,
        "",
    ),
    Case(
        "store-leftover-tmp",
        "a .tmp file left by a killed run",
        "removed on the next run; logged",
        leftover_tmp,
        None,
        "",
    ),
    Case(
        "checkpoint-overwritten",
        "checkpoint folder overwritten in place",
        "new key: the new model's features",
        overwritten_checkpoint,
        None,
        "",
    ),
    Case(
        "object-last-value-edited",
        "last value of a parameter edited via .data",
        "new key: the new model's features",
        edited_last_value,
        None,
        "",
    ),
]
