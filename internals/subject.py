"""`Subject`: a model (or vector table) whose activations lingprobe reads."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, overload

import torch
from jaxtyping import Float
from torch import Tensor

from internals.extract import extract_features
from internals.items import SpanItem
from internals.pool import PoolHow
from internals.progress import ProgressCallback
from internals.reading import LongTexts, Reading
from internals.sites import Site, SiteSpec, every_layer
from lingprobe.feature_set import FeatureSet


class Subject(ABC):
    """Common surface of every subject: its sites, its identity, and `features`."""

    name: str
    init: str
    kind: str  # "encoder" | "decoder" | "encoder-decoder" | "static"
    dim: int
    fingerprint: str
    device: torch.device

    @property
    @abstractmethod
    def part_layers(self) -> dict[str, int]:
        """Layers per part; sites run 0..n inclusive."""

    @property
    def streams(self) -> tuple[str, ...]:
        """Streams readable besides `resid_post`."""
        return ()

    @property
    def part_heads(self) -> dict[str, int]:
        """Attention heads per layer, per part that has them (none here)."""
        return {}

    def site_dim(self, site: Site) -> int:
        """Width of one segment's features at `site` (`dim`; a head's width at head sites)."""
        return self.dim

    @abstractmethod
    def compute(
        self,
        items: Sequence[SpanItem],
        sites: Sequence[Site],
        reading: Reading,
        progress: ProgressCallback | None = None,
    ) -> Float[Tensor, "item site dim"]:
        """Pooled features of validated items at checked sites (no store involved).

        `progress`, when given, is called with a `ProgressStep` after each batch.
        """

    @overload
    def features(
        self,
        items: Sequence[SpanItem],
        sites: SiteSpec | None = None,
        *,
        pool: PoolHow = "mean",
        long_texts: LongTexts = "window",
        window_stride: int | None = None,
        store: str | Path | None = None,
        store_dtype: torch.dtype | None = None,
        shard_size: int = 2048,
        progress: bool | ProgressCallback = True,
        lazy: Literal[False] = False,
    ) -> Float[Tensor, "item site dim"]: ...

    @overload
    def features(
        self,
        items: Sequence[SpanItem],
        sites: SiteSpec | None = None,
        *,
        pool: PoolHow = "mean",
        long_texts: LongTexts = "window",
        window_stride: int | None = None,
        store: str | Path | None = None,
        store_dtype: torch.dtype | None = None,
        shard_size: int = 2048,
        progress: bool | ProgressCallback = True,
        lazy: Literal[True],
    ) -> FeatureSet: ...

    def features(
        self,
        items: Sequence[SpanItem],
        sites: SiteSpec | None = None,
        *,
        pool: PoolHow = "mean",
        long_texts: LongTexts = "window",
        window_stride: int | None = None,
        store: str | Path | None = None,
        store_dtype: torch.dtype | None = None,
        shard_size: int = 2048,
        progress: bool | ProgressCallback = True,
        lazy: bool = False,
    ) -> Float[Tensor, "item site dim"] | FeatureSet:
        """Pooled features `[item, site, segments*dim]` (float32, CPU) of `items` at `sites`.

        `sites` defaults to every layer; give `Site`s, names (`"encoder.3"`), layer numbers
        (negative from the last) or a spec string (`"all"`, `"last"`, `"3,5"`). `long_texts`
        says what happens to a text longer than the model's maximum length: "window" (default)
        reads it as sliding windows `window_stride` tokens apart (default half a window), each
        word from the window where it has the most context; "truncate" cuts it (with a warning
        counting items and tokens); "error" refuses it. With `store`, features are cached on
        disk per (subject, data, site, reading settings) and a rerun only computes what is
        missing; every shard read is verified against its key and checksum.
        `store_dtype=float16` halves the store; the values returned are then the stored
        (rounded) ones on every run. `progress`: a bar over items (True), none (False), or a
        callback receiving a `ProgressStep` after each batch.

        `lazy=True` (with `store`) returns a `FeatureSet` over the store's shards instead of one
        tensor: extraction then holds one window of shards (about 64 MiB of features) and the
        batch being computed, however many items there are, and the features are read from
        disk by sites and items when needed (`fs.read(...)`, `fs[items, sites]`,
        `fs.to_tensor()`); their values equal those `lazy=False` returns.

        Examples:
            >>> from internals import SpanItem, load_subject
            >>> glove = load_subject("glove:6B.50d")
            >>> items = [SpanItem("The cat sat.", spans=((4, 7),)), SpanItem("Dogs bark.")]
            >>> glove.features(items, progress=False).shape  # [item, site, dim]
            torch.Size([2, 1, 50])
        """
        return extract_features(
            self,
            items,
            sites if sites is not None else every_layer(self),
            reading=Reading(pool, long_texts, window_stride),
            store=store,
            store_dtype=store_dtype,
            shard_size=shard_size,
            progress=progress,
            lazy=lazy,
        )

    def content_key(self) -> str:
        """The store's key for this subject now: `fingerprint` (what was loaded) plus whatever
        can change after loading (a model's weights). Computed each time it is asked for."""
        return self.fingerprint

    def describe(self) -> dict[str, Any]:
        """Identity of the subject, for stores and result tables."""
        return {"name": self.name, "init": self.init, "kind": self.kind, "dim": self.dim}

    def __repr__(self) -> str:
        layers = ", ".join(f"{p}: {n} layers" for p, n in self.part_layers.items())
        return f"{type(self).__name__}({self.name!r}, init={self.init!r}, {layers}, dim={self.dim})"
