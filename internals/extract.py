"""The extraction loop: validate, then compute or load each shard of pooled features."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import torch
from jaxtyping import Float
from torch import Tensor
from tqdm.auto import tqdm

from internals import sites as site_rules
from internals.errors import ItemError
from internals.items import SpanItem, validate_items
from internals.pool import POOL_CHOICES, PoolHow
from internals.sites import Site
from internals.store import ActivationStore, data_fingerprint
from internals.subject import Subject


def extract_features(
    subject: Subject,
    items: Sequence[SpanItem],
    sites: Sequence[Site],
    *,
    pool: PoolHow,
    store: str | Path | None,
    store_dtype: torch.dtype | None,
    shard_size: int,
    progress: bool,
) -> Float[Tensor, "item site dim"]:
    """Features of `items` at `sites`; with a store, shard by shard, resuming what exists."""
    if pool not in POOL_CHOICES:
        raise ValueError(f"pool={pool!r} is not a pooling; choose one of {', '.join(POOL_CHOICES)}")
    width = validate_items(items)
    sites = list(dict.fromkeys(sites))
    site_rules.check(subject, sites)
    texts = sum(len(item.texts()) for item in items)
    with tqdm(
        total=texts, desc=f"features {subject.name}", unit="text", disable=not progress, leave=False
    ) as bar:
        if store is None:
            return subject.compute(items, sites, pool, bar)
        settings = {"pool": pool, "dtype": str(store_dtype or torch.float32)}
        data_key = data_fingerprint(items, settings)
        meta = {**subject.describe(), **settings, "items": len(items), "shard_size": shard_size}
        shelf = ActivationStore(store, subject.fingerprint, data_key, meta)
        out = torch.empty(len(items), len(sites), width * subject.dim)
        for shard in range(math.ceil(len(items) / shard_size)):
            rows = slice(shard * shard_size, min(len(items), (shard + 1) * shard_size))
            chunk = items[rows]
            shape = (len(chunk), width * subject.dim)
            have = {site: shelf.load(site, shard, shape) for site in sites}
            missing = [site for site, tensor in have.items() if tensor is None]
            if missing:
                try:
                    computed = subject.compute(chunk, missing, pool, bar)
                except ItemError as error:
                    raise error.shifted(rows.start) from None
                if store_dtype is not None:
                    computed = computed.to(store_dtype)
                for k, site in enumerate(missing):
                    shelf.save(site, shard, computed[:, k])
                    have[site] = computed[:, k]
            else:
                bar.update(sum(len(item.texts()) for item in chunk))
            for k, site in enumerate(sites):
                tensor = have[site]
                assert tensor is not None
                out[rows, k] = tensor.float()
        return out
