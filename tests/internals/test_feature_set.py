"""`FeatureSet`: features on disk, written from chunks, read back lazily by sites and items.

The reference is the tensor the chunks make when concatenated: every read, slice and round trip
must equal it (after rounding to the stored dtype). Damaged shards and indexes are in
`tests/bad_inputs/feature_set_cases.py`.
"""

from __future__ import annotations

import os
import socket

import numpy as np
import pytest
import torch

from internals import FeatureSet
from lingprobe.errors import FeatureSetError, FeatureSetIndexError
from lingprobe.feature_index import INDEX


def values(items: int = 13, sites: int = 4, dim: int = 5, seed: int = 0) -> torch.Tensor:
    return torch.randn(items, sites, dim, generator=torch.Generator().manual_seed(seed))


def chunked(tensor: torch.Tensor, size: int) -> list[torch.Tensor]:
    return list(torch.split(tensor, size))


def names(count: int) -> list[str]:
    return [f"layer.{k}" for k in range(count)]


@pytest.mark.parametrize("chunk", [1, 3, 4, 5, 13])
@pytest.mark.parametrize("shard_size", [1, 4, 13, 50])
def test_round_trip_with_uneven_chunks_and_shards(tmp_path, chunk, shard_size):
    reference = values()
    fs = FeatureSet.write(tmp_path / "fs", chunked(reference, chunk), names(4), None, shard_size)
    assert fs.shape == (13, 4, 5) and len(fs) == 13 and fs.dtype == torch.float32
    assert fs.site_names == tuple(names(4)) and fs.shard_size == shard_size
    assert torch.equal(fs.to_tensor(), reference)
    assert torch.equal(FeatureSet.open(tmp_path / "fs").to_tensor(), reference)
    shards = sorted((tmp_path / "fs").rglob("shard-*.safetensors"))
    assert len(shards) == 4 * -(-13 // shard_size)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_lower_dtypes_store_the_rounded_values(tmp_path, dtype):
    reference = values()
    fs = FeatureSet.write(tmp_path / "fs", chunked(reference, 6), names(4), dtype, 4)
    assert fs.dtype == dtype
    got = FeatureSet.open(tmp_path / "fs").to_tensor()
    assert got.dtype == torch.float32
    assert torch.equal(got, reference.to(dtype).float())
    assert fs.nbytes == 13 * 4 * 5 * 2


def test_numpy_chunks_keep_their_dtype_and_memory_mapped_files_work(tmp_path):
    reference = values().numpy().astype(np.float16)
    path = tmp_path / "features.npy"
    np.save(path, reference)
    mapped = np.load(path, mmap_mode="r")
    chunks = (mapped[start : start + 5] for start in range(0, len(mapped), 5))
    fs = FeatureSet.write(tmp_path / "fs", chunks, names(4), shard_size=3)
    assert fs.dtype == torch.float16
    assert torch.equal(fs.to_tensor(), torch.from_numpy(reference).float())
    float64 = FeatureSet.write(tmp_path / "f64", [values().double().numpy()], names(4))
    assert float64.dtype == torch.float32
    assert torch.equal(float64.to_tensor(), values().double().float())


KEYS = [
    (slice(None), slice(None)),
    (slice(2, 9), slice(1, 3)),
    (slice(None, None, 3), slice(None, None, -1)),
    (slice(-4, None), [3, 0]),
    ([12, 0, 5, 5, -1], slice(None)),
    (7, slice(None)),
    (slice(None), 2),
    (4, -1),
    (torch.tensor([3, 11, 2]), [1, 2]),
    (slice(1, 4), torch.tensor([2, 0])),
    (np.int64(5), np.array([1, 3])),
    (torch.arange(13) % 3 == 0, slice(1, 2)),
    (np.array([0, 12]), slice(None)),
]


@pytest.mark.parametrize("key", KEYS, ids=[str(k) for k in range(len(KEYS))])
def test_indexing_equals_the_tensors_indexing(tmp_path, key):
    reference = values()
    fs = FeatureSet.write(tmp_path / "fs", chunked(reference, 4), names(4), shard_size=4)
    items, sites = key
    # the reference's own indexing, one axis at a time (two index lists would pair up)
    site_list = list(range(4))[sites] if isinstance(sites, slice) else sites
    by_items = reference[torch.as_tensor(items) if isinstance(items, np.ndarray) else items]
    if isinstance(items, int | np.integer):
        expected = by_items[site_list]
    else:
        expected = by_items[:, site_list]
    assert torch.equal(fs[items, sites], expected)


def test_read_takes_site_numbers_and_items_in_the_order_asked(tmp_path):
    reference = values()
    fs = FeatureSet.write(tmp_path / "fs", [reference], names(4), shard_size=5)
    assert torch.equal(fs.read([3, 1]), reference[:, [3, 1]])
    assert torch.equal(fs.read(items=[9, 2]), reference[[9, 2]])
    assert torch.equal(fs.read([2], slice(5, 10)), reference[5:10, [2]])
    assert torch.equal(fs.read(np.array([0, 3]), np.arange(4)), reference[:4, [0, 3]])
    assert torch.equal(fs.read(list(np.arange(2)), torch.tensor([1])), reference[[1], :2])
    assert torch.equal(fs.read(range(-1, -3, -1)), reference[:, [3, 2]])
    assert torch.equal(fs[3:7], reference[3:7])
    assert fs.read([0], []).shape == (0, 1, 5)


def test_reading_reads_only_the_shards_asked_for(tmp_path):
    reference = values()
    fs = FeatureSet.write(tmp_path / "fs", [reference], names(4), shard_size=5)
    for site in ("site-0000", "site-0002"):
        for shard in (tmp_path / "fs" / site).iterdir():
            shard.unlink()
    (tmp_path / "fs" / "site-0001" / "shard-000002.safetensors").unlink()
    assert torch.equal(fs.read([1, 3], slice(0, 10)), reference[:10, [1, 3]])
    assert torch.equal(fs[:, 3], reference[:, 3])
    with pytest.raises(FeatureSetError, match=r"site-0001/shard-000002\.safetensors is damaged"):
        fs.read([1])


def test_content_key_follows_the_values(tmp_path):
    reference = values()
    one = FeatureSet.write(tmp_path / "a", chunked(reference, 3), names(4), shard_size=4)
    two = FeatureSet.write(tmp_path / "b", [reference.numpy()], names(4), shard_size=4)
    assert one.key == two.key
    changed = reference.clone()
    changed[12, 3, 4] += 1
    assert FeatureSet.write(tmp_path / "c", [changed], names(4), shard_size=4).key != one.key


def test_indexes_outside_the_shape_are_refused(tmp_path):
    fs = FeatureSet.write(tmp_path / "fs", [values()], names(4))
    with pytest.raises(FeatureSetIndexError, match=r"item 13 is outside the 13 items"):
        fs[13]
    with pytest.raises(FeatureSetIndexError, match=r"sites \[4\] are outside the 4 sites"):
        fs.read([4])
    with pytest.raises(FeatureSetIndexError, match=r"boolean item mask of shape \(3,\)"):
        fs.read(items=torch.tensor([True, False, True]))
    with pytest.raises(FeatureSetIndexError, match=r"fs\[items, sites\]"):
        fs[0, 0, 0]


def test_an_interrupted_write_leaves_nothing_open_accepts(tmp_path):
    def broken():
        yield values()[:6]
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        FeatureSet.write(tmp_path / "fs", broken(), names(4), shard_size=2)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(FeatureSetError, match=r"no complete feature set is there"):
        FeatureSet.open(tmp_path / "fs")


def test_a_dead_writers_folder_is_removed_by_the_next_write(tmp_path):
    host = socket.gethostname().replace(".", "-")
    leftover = tmp_path / f".fs.{host}.999999999.beef.tmp"
    (leftover / "site-0000").mkdir(parents=True)
    (leftover / "site-0000" / "shard-000000.safetensors").write_bytes(b"half")
    alive = tmp_path / f".fs.{host}.{os.getpid()}.cafe.tmp"
    alive.mkdir()
    FeatureSet.write(tmp_path / "fs", [values()], names(4))
    assert not leftover.exists(), "the dead writer's folder was kept"
    assert alive.exists(), "a live writer's folder was removed"


def test_an_existing_folder_is_replaced_only_when_asked(tmp_path):
    FeatureSet.write(tmp_path / "fs", [values(seed=1)], names(4))
    with pytest.raises(FeatureSetError, match=r"is not empty; .* overwrite=True"):
        FeatureSet.write(tmp_path / "fs", [values(seed=2)], names(4))
    assert torch.equal(FeatureSet.open(tmp_path / "fs").to_tensor(), values(seed=1))
    fs = FeatureSet.write(tmp_path / "fs", [values(seed=2)[:, :2]], names(2), overwrite=True)
    assert torch.equal(FeatureSet.open(tmp_path / "fs").to_tensor(), values(seed=2)[:, :2])
    assert fs.shape == (13, 2, 5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fs"]
    (tmp_path / "empty").mkdir()
    assert FeatureSet.write(tmp_path / "empty", [values()], names(4)).shape == (13, 4, 5)


def test_open_takes_the_folder_or_its_index(tmp_path):
    fs = FeatureSet.write(tmp_path / "fs", [values()], names(4))
    by_index = FeatureSet.open(tmp_path / "fs" / INDEX)
    assert by_index.key == fs.key and torch.equal(by_index.to_tensor(), values())
