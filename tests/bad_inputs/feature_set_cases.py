"""Feature sets written from bad chunks, and feature sets damaged on disk: each refused, naming
the value or the file and the fix, never read as numbers."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from internals import SpanItem
from internals.errors import OptionError
from lingprobe.errors import FeatureSetError, FeatureSetIndexError
from lingprobe.feature_set import FeatureSet
from tests.bad_inputs.case import Case, Env

SITES = ["layer.0", "layer.1"]
ITEMS = [SpanItem("the cat sat", spans=((4, 7),)), SpanItem("a dog barked", spans=((2, 5),))]


def features(seed: int = 0) -> torch.Tensor:
    return torch.randn(5, 2, 3, generator=torch.Generator().manual_seed(seed))


def written(env: Env, seed: int = 0) -> Path:
    folder = env.tmp() / "fs"
    FeatureSet.write(folder, [features(seed)[:3], features(seed)[3:]], SITES, shard_size=2)
    return folder


def damaged(damage: Callable[[Env, Path], None]) -> Callable[[Env], None]:
    """Write a feature set, damage it, open and read it all."""

    def run(env: Env) -> None:
        folder = written(env)
        damage(env, folder)
        FeatureSet.open(folder).to_tensor()

    return run


def shard(folder: Path, site: int = 1, number: int = 1) -> Path:
    return folder / f"site-{site:04d}" / f"shard-{number:06d}.safetensors"


def flip_data_byte(env: Env, folder: Path) -> None:
    data = bytearray(shard(folder).read_bytes())
    data[-2] ^= 0x04
    shard(folder).write_bytes(bytes(data))


def truncate(env: Env, folder: Path) -> None:
    shard(folder).write_bytes(shard(folder).read_bytes()[:100])


def remove_shard(env: Env, folder: Path) -> None:
    shard(folder).unlink()


def copy_other_site(env: Env, folder: Path) -> None:
    shutil.copyfile(shard(folder, site=0), shard(folder, site=1))


def shard_of_another_set(env: Env, folder: Path) -> None:
    shutil.copyfile(shard(written(env, seed=1)), shard(folder))


def edit_index(env: Env, folder: Path) -> None:
    path = folder / "featureset.json"
    path.write_text(path.read_text().replace('"shard_size": 2', '"shard_size": 3'))


def index_of_another_set(env: Env, folder: Path) -> None:
    shutil.copyfile(written(env, seed=1) / "featureset.json", folder / "featureset.json")


def future_index(env: Env, folder: Path) -> None:
    path = folder / "featureset.json"
    record = json.loads(path.read_text())
    record["format"] = "lingprobe-featureset/9"
    path.write_text(json.dumps(record))


def remove_index(env: Env, folder: Path) -> None:
    (folder / "featureset.json").unlink()


def write(chunks: list, **options) -> Callable[[Env], object]:
    return lambda env: FeatureSet.write(env.tmp() / "fs", chunks, SITES, **options)


def not_empty(env: Env) -> None:
    folder = written(env)
    FeatureSet.write(folder, [features(1)], SITES)


def with_value(value: float) -> list[torch.Tensor]:
    chunk = features()
    chunk[3, 1, 2] = value
    return [chunk]


FEATURE_SETS = [
    Case(
        "featureset-shard-bit-flip",
        "one data byte of a feature set's shard flipped",
        "FeatureSetError naming the shard: checksum mismatch; write it again",
        damaged(flip_data_byte),
        FeatureSetError,
        r"site-0001/shard-000001\.safetensors is damaged \(checksum mismatch.*write it again",
    ),
    Case(
        "featureset-shard-truncated",
        "a feature set's shard cut to 100 bytes",
        "FeatureSetError naming the shard: unreadable",
        damaged(truncate),
        FeatureSetError,
        r"shard-000001\.safetensors is damaged \(unreadable",
    ),
    Case(
        "featureset-shard-missing",
        "a feature set's shard deleted",
        "FeatureSetError naming the shard: missing",
        damaged(remove_shard),
        FeatureSetError,
        r"shard-000001\.safetensors is damaged \(missing\)",
    ),
    Case(
        "featureset-shard-other-site",
        "site 0's shard copied over site 1's",
        "FeatureSetError: it belongs to another site",
        damaged(copy_other_site),
        FeatureSetError,
        r"it belongs to '.*/site-0000/000001', not '.*/site-0001/000001'",
    ),
    Case(
        "featureset-shard-other-set",
        "a shard copied in from another feature set of the same layout",
        "FeatureSetError: it belongs to another feature set",
        damaged(shard_of_another_set),
        FeatureSetError,
        r"is damaged \(it belongs to",
    ),
    Case(
        "featureset-index-edited",
        "the index's shard_size edited",
        "FeatureSetError on open: the index's checksum does not match",
        damaged(edit_index),
        FeatureSetError,
        r"featureset\.json: the index's checksum does not match its content",
    ),
    Case(
        "featureset-index-other-set",
        "the index of another feature set copied in",
        "FeatureSetError naming the first shard read: it belongs to another set",
        damaged(index_of_another_set),
        FeatureSetError,
        r"site-0000/shard-000000\.safetensors is damaged \(it belongs to",
    ),
    Case(
        "featureset-index-future-format",
        "an index of another format version",
        "FeatureSetError: expected lingprobe-featureset/1",
        damaged(future_index),
        FeatureSetError,
        r"has format 'lingprobe-featureset/9', expected 'lingprobe-featureset/1'",
    ),
    Case(
        "featureset-index-missing",
        "no index (as a write that crashed would leave)",
        "FeatureSetError: no complete feature set is there",
        damaged(remove_index),
        FeatureSetError,
        r"featureset\.json does not exist: no complete feature set is there",
    ),
    Case(
        "featureset-write-nan",
        "a NaN among the chunks' values",
        "FeatureSetError naming the item: must be finite",
        write(with_value(float("nan"))),
        FeatureSetError,
        r"item 3 holds nan: features must be finite",
    ),
    Case(
        "featureset-write-float16-overflow",
        "a value of 1e6 stored as float16",
        "FeatureSetError: beyond the range of torch.float16; give float32",
        write(with_value(1e6), dtype=torch.float16),
        FeatureSetError,
        r"item 3 holds 1000000\.0, beyond the range of torch\.float16; give dtype=torch\.float32",
    ),
    Case(
        "featureset-write-chunk-shape",
        "a chunk with another dim than the one before",
        "FeatureSetError naming the chunk and the shape expected",
        write([features(), torch.zeros(2, 2, 4)]),
        FeatureSetError,
        r"chunk 1 \(from item 5\) has shape \(2, 2, 4\), expected \[item, 2, 3\]",
    ),
    Case(
        "featureset-write-sites-mismatch",
        "chunks with 2 sites for 3 site names",
        "FeatureSetError: one column per site name",
        lambda env: FeatureSet.write(env.tmp() / "fs", [features()], ["a", "b", "c"]),
        FeatureSetError,
        r"chunk 0 .* expected \[item, 3, dim\]: give \[item, site, dim\] blocks",
    ),
    Case(
        "featureset-write-no-rows",
        "no chunks (or only empty ones)",
        "FeatureSetError: chunks held no rows",
        write([np.zeros((0, 2, 3), dtype=np.float32)]),
        FeatureSetError,
        r"chunks held no rows",
    ),
    Case(
        "featureset-write-int-dtype",
        "dtype=torch.int8",
        "FeatureSetError: float32, float16 or bfloat16",
        write([features()], dtype=torch.int8),
        FeatureSetError,
        r"dtype=torch\.int8: a feature set stores torch\.float32, torch\.float16 or",
    ),
    Case(
        "featureset-write-duplicate-sites",
        "two sites of the same name",
        "FeatureSetError: one distinct name per site",
        lambda env: FeatureSet.write(env.tmp() / "fs", [features()], ["a", "a"]),
        FeatureSetError,
        r"site_names=\['a', 'a'\]: give one distinct name per site",
    ),
    Case(
        "featureset-write-shard-size-zero",
        "shard_size=0",
        "FeatureSetError: at least 1",
        write([features()], shard_size=0),
        FeatureSetError,
        r"shard_size=0: give a whole number of items per shard, at least 1",
    ),
    Case(
        "featureset-write-not-empty",
        "a folder that already holds a feature set",
        "FeatureSetError: give another folder or overwrite=True",
        not_empty,
        FeatureSetError,
        r"is not empty; give another folder, remove it, or pass overwrite=True",
    ),
    Case(
        "lazy-without-store",
        "subject.features(items, lazy=True) without store",
        "OptionError: lazy=True needs store=DIR",
        lambda env: env.static.features(ITEMS, progress=False, lazy=True),
        OptionError,
        r"lazy=True keeps the features on disk and needs store=DIR",
    ),
    Case(
        "lazy-store-float64",
        "lazy=True with store_dtype=torch.float64",
        "OptionError: a feature set stores float32, float16 or bfloat16",
        lambda env: env.static.features(
            ITEMS, store=env.tmp(), store_dtype=torch.float64, progress=False, lazy=True
        ),
        OptionError,
        r"lazy=True with store_dtype=torch\.float64: a feature set stores torch\.float32",
    ),
    Case(
        "featureset-read-out-shape",
        "fs.read(sites=[0], out=a tensor of another shape)",
        "FeatureSetIndexError: give a CPU tensor of the read's shape",
        lambda env: FeatureSet.open(written(env)).read([0], out=torch.empty(5, 2, 3)),
        FeatureSetIndexError,
        r"out is torch\.float32 \(5, 2, 3\) on cpu; give a CPU tensor of shape \(5, 1, 3\)",
    ),
]
