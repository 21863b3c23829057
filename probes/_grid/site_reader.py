"""Reading a `FeatureSet`'s sites group by group, the next group in the background.

A fit under a memory budget trains one group of sites to the end, drops it and goes on with the
next (`memory_budget.plan_sites`). With `prefetch`, one background thread reads the next
group from disk while the current one trains, so the disk and the cores work at once; two
groups are then held at a time, which the plan counts. Every site is read once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

import torch
from jaxtyping import Float
from torch import Tensor

from lingprobe.feature_set import FeatureSet
from probes._grid.inputs import check_features

Read = Callable[[tuple[int, ...]], Tensor]
READ_BYTES = 1 << 26  # float32 bytes of one read of a group's items (memory, not results)
Part = TypeVar("Part")


def site_groups(
    read: Callable[[tuple[int, ...]], Part], groups: Sequence[tuple[int, ...]], prefetch: bool
) -> Iterator[tuple[tuple[int, ...], Part]]:
    """`(group, read(group))` for every group in order; with `prefetch`, the next group's read
    starts as soon as a group is handed out (the caller drops a group before taking the next)."""
    with ThreadPoolExecutor(1, thread_name_prefix="features") as reader:
        pending: Future[Part] | None = reader.submit(read, groups[0]) if groups else None
        try:
            for i, group in enumerate(groups):
                assert pending is not None
                features = pending.result()
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
    features: FeatureSet, sites: Sequence[int], dtype: torch.dtype = torch.float32
) -> Read:
    """Reads the features of `sites[j]` for each position j of a group as `[item, site, dim]`
    in `dtype` (the stored dtype or float32: the same values), checked finite (a NaN or inf is
    refused naming its sites). Read in blocks of whole shards of about `READ_BYTES` float32, so
    a group held in float16 needs no float32 copy of itself."""

    def read(group: tuple[int, ...]) -> Float[Tensor, "item site dim"]:
        chosen = [sites[j] for j in group]
        n_items, _, dim = features.shape
        out = torch.empty(n_items, len(chosen), dim, dtype=dtype)
        shards = max(1, READ_BYTES // (features.shard_size * len(chosen) * dim * 4))
        step = shards * features.shard_size
        for start in range(0, n_items, step):
            part = features.read(chosen, slice(start, start + step), out=out[start : start + step])
            check_features(part, f"feats (FeatureSet sites {chosen})")
        return out

    return read


def site_major_reader(features: FeatureSet, sites: Sequence[int]) -> Read:
    """Reads `sites[j]` for each position j of a group as `[site, item, dim]` float32 (one site
    at a time into the result, so no second copy of the group is made), checked finite."""

    def read(group: tuple[int, ...]) -> Float[Tensor, "site item dim"]:
        n_items, _, dim = features.shape
        out = torch.empty(len(group), n_items, dim)
        for j, position in enumerate(group):
            site = sites[position]
            one = features.read(sites=[site], out=out[j].unsqueeze(1))
            check_features(one, f"X (FeatureSet site {site})")
        return out

    return read
