"""The extraction loop: validate, then compute or load each shard of pooled features.

It works on anything shaped like a subject (`FeatureSource`), so `internals.subject` imports it and
not the other way round.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Protocol

import torch
from jaxtyping import Float
from torch import Tensor

from internals import sites as site_rules
from internals.errors import ItemError
from internals.items import SpanItem, validate_items
from internals.progress import ProgressBar, ProgressCallback, ProgressStep
from internals.reading import Reading
from internals.sites import HasSites, Site
from internals.store import ActivationStore, data_fingerprint


class FeatureSource(HasSites, Protocol):
    """What the loop needs of a subject: identity, width, and `compute`."""

    name: str
    dim: int
    fingerprint: str

    def describe(self) -> dict[str, Any]:
        """Identity for the store's metadata."""
        ...

    def compute(
        self,
        items: Sequence[SpanItem],
        sites: Sequence[Site],
        reading: Reading,
        progress: ProgressCallback | None = None,
    ) -> Float[Tensor, "item site dim"]:
        """Pooled features of validated items at checked sites."""
        ...


def extract_features(
    subject: FeatureSource,
    items: Sequence[SpanItem],
    sites: Sequence[Site],
    *,
    reading: Reading,
    store: str | Path | None,
    store_dtype: torch.dtype | None,
    shard_size: int,
    progress: bool | ProgressCallback,
) -> Float[Tensor, "item site dim"]:
    """Features of `items` at `sites`; with a store, shard by shard, resuming what exists.

    `progress`: True for a bar over items (padding waste in its postfix), False for none, or a
    callback that receives a `ProgressStep` after each batch.
    """
    width = validate_items(items)
    sites = list(dict.fromkeys(sites))
    site_rules.check(subject, sites)
    bar: Any = (
        nullcontext(progress)
        if callable(progress)
        else ProgressBar(len(items), f"features {subject.name}", enabled=bool(progress))
    )
    with bar as report:
        if store is None:
            return subject.compute(items, sites, reading, report)
        settings = {**reading.key(), "dtype": str(store_dtype or torch.float32)}
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
                    computed = subject.compute(chunk, missing, reading, report)
                except ItemError as error:
                    raise error.shifted(rows.start) from None
                if store_dtype is not None:
                    computed = computed.to(store_dtype)
                for k, site in enumerate(missing):
                    shelf.save(site, shard, computed[:, k])
                    have[site] = computed[:, k]
            else:
                report(ProgressStep(len(chunk)))
            for k, site in enumerate(sites):
                tensor = have[site]
                assert tensor is not None
                out[rows, k] = tensor.float()
        return out
