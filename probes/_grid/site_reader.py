"""Reading a `FeatureSet`'s sites group by group, the next group in the background.

A fit under a memory budget trains one group of sites to the end, drops it and goes on with the
next (`memory_budget.plan_sites`). With `prefetch`, one background thread reads the next
group from disk while the current one trains, so the disk and the cores work at once; two
groups are then held at a time, which the plan counts. Every site is read once.

The readers read for a device (`host_buffers`): for a CUDA device each block goes from disk into
pinned host memory and on to the device without blocking, on a side stream, while the current
group trains, and the group is held on the device; for the CPU each block is read straight into
the group's host tensor.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import torch
from jaxtyping import Float
from torch import Tensor

from lingprobe.feature_set import FeatureSet
from probes._grid.host_buffers import CPU, Arrival, Where, exact, read_blocks
from probes._grid.inputs import check_features

Read = Callable[[tuple[int, ...]], Arrival]
READ_BYTES = 1 << 26  # float32 bytes of one read of a group's items (memory, not results)


def site_groups(
    read: Read, groups: Sequence[tuple[int, ...]], prefetch: bool
) -> Iterator[tuple[tuple[int, ...], Tensor]]:
    """`(group, read(group).take())` for every group in order; with `prefetch`, the next
    group's read starts as soon as a group is handed out (the caller drops a group before
    taking the next)."""
    with ThreadPoolExecutor(1, thread_name_prefix="features") as reader:
        pending: Future[Arrival] | None = reader.submit(read, groups[0]) if groups else None
        try:
            for i, group in enumerate(groups):
                assert pending is not None
                features = pending.result().take()
                pending = None
                more = i + 1 < len(groups)
                if prefetch and more:
                    pending = reader.submit(read, groups[i + 1])
                yield group, features
                del features
                if not prefetch and more:
                    pending = reader.submit(read, groups[i + 1])
        finally:
            if pending is not None:
                pending.cancel()


def in_memory(
    feats: Float[Tensor, "item site dim"] | FeatureSet, sites: Sequence[int] | None = None
) -> Float[Tensor, "item chosen dim"]:
    """`feats` at `sites` (default all) as a tensor: a tensor's own sites (a view when all are
    asked), or a FeatureSet's read once, float32, checked finite."""
    if isinstance(feats, Tensor):
        if sites is None or list(sites) == list(range(feats.shape[1])):
            return feats
        return feats[:, list(sites)]
    x = feats.read(sites=None if sites is None else list(sites))
    check_features(x, "feats (FeatureSet)")
    return x


def item_major_reader(
    features: FeatureSet,
    sites: Sequence[int],
    dtype: torch.dtype = torch.float32,
    device: torch.device = CPU,
) -> Read:
    """Reads the features of `sites[j]` for each position j of a group as `[item, site, dim]`
    in `dtype` (the stored dtype or float32: the same values) for `device`, checked finite (a
    NaN or inf is refused naming its sites). Read in blocks of about `READ_BYTES` float32:
    whole shards of every site of the group, or where one shard of them is more, one shard of
    some of the sites (a site's shard is read whole either way), so a group held in float16
    needs no float32 copy of itself and the pinned blocks on their way to a GPU stay small."""
    device = exact(device)

    def read(group: tuple[int, ...]) -> Arrival:
        chosen = [sites[j] for j in group]
        n_items, _, dim = features.shape
        shard_bytes = features.shard_size * dim * 4  # one site's shard, float32
        width = min(len(chosen), max(1, READ_BYTES // shard_bytes))  # sites per block
        step = max(1, READ_BYTES // (shard_bytes * width)) * features.shard_size

        def fill(where: Where, buffer: Tensor) -> Tensor:
            assert isinstance(where, tuple)
            items, columns = where
            assert isinstance(items, slice)
            these = chosen[columns]
            part = features.read(these, items, out=buffer)
            check_features(part, f"feats (FeatureSet sites {these})")
            return part

        blocks = [
            (slice(start, start + step), slice(j, j + width))
            for start in range(0, n_items, step)
            for j in range(0, len(chosen), width)
        ]
        return read_blocks((n_items, len(chosen), dim), dtype, device, fill, blocks)

    return read


def site_major_reader(
    features: FeatureSet, sites: Sequence[int], device: torch.device = CPU
) -> Read:
    """Reads `sites[j]` for each position j of a group as `[site, item, dim]` float32 for
    `device` (each site in blocks of whole shards of about `READ_BYTES` into the result, so no
    second copy of the group is made), checked finite."""
    device = exact(device)

    def read(group: tuple[int, ...]) -> Arrival:
        n_items, _, dim = features.shape
        shards = max(1, READ_BYTES // (features.shard_size * dim * 4))
        step = shards * features.shard_size

        def fill(where: Where, buffer: Tensor) -> Tensor:
            assert isinstance(where, tuple) and isinstance(where[0], int)
            site = sites[group[where[0]]]
            one = features.read(sites=[site], items=where[1], out=buffer.unsqueeze(1))
            check_features(one, f"X (FeatureSet site {site})")
            return buffer

        blocks = [
            (j, slice(a, a + step)) for j in range(len(group)) for a in range(0, n_items, step)
        ]
        return read_blocks((len(group), n_items, dim), torch.float32, device, fill, blocks)

    return read
