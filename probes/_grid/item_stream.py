"""The grid trainer on a `FeatureSet` whose single site does not fit the memory budget.

The fit then holds no whole site. Its random minibatches are known an epoch ahead
(`streams.RowStreams`), so each epoch is trained in phases, each a range of step chunks:
a phase reads the rows its batches gather (every site of the grid), remapped to their place in
what was read, while the next phase is read in the background. The dev items' features stay
in memory for the best-epoch selection; the final evaluation reads the items block by block.
Every batch sees the same features, dropout draws and order as in memory, so the results equal
the fit of the same features as a tensor.

The cost is in the reads: a `FeatureSet` reads whole shards, and a phase's rows are spread over
the whole site, so each phase reads most of the training items' shards: one read of the
features per phase, several per epoch. The log says how many.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from jaxtyping import Float, Int
from torch import Tensor

from lingprobe.feature_set import FeatureSet
from probes._grid.host_buffers import Arrival, Where, read_blocks, shard_blocks
from probes._grid.inputs import check_features
from probes._grid.memory_budget import format_bytes
from probes._grid.site_reader import READ_BYTES, site_groups
from probes._grid.workers import resolve_threads
from probes.errors import ProbeConfigError

log = logging.getLogger(__name__)
# (first chunk of each mask, chunk each mask stops at, the epoch's rows as positions in the
# features held): one part of an epoch's training
Phase = tuple[list[int], list[int], Tensor]
Phases = Callable[[Tensor, list[int]], Iterator[Phase] | list[Phase]]


def whole_epoch(rows: Tensor, chunks: list[int]) -> list[Phase]:
    """The epoch in one phase: every chunk of every mask, rows indexing the whole features."""
    return [([0] * len(chunks), chunks, rows)]


class ItemStream:
    """Reads the grid's sites of a `FeatureSet` by item blocks while a fit runs (`attach`)."""

    def __init__(self, features: FeatureSet, sites: Sequence[int], budget: int) -> None:
        self.features, self.sites, self.budget = features, list(sites), budget
        n_items, _, dim = features.shape
        self.shape = (n_items, len(self.sites), dim)
        self.row_bytes = len(self.sites) * dim * 4  # float32

    def placeholder(self) -> Float[Tensor, "item site dim"]:
        """A tensor of the features' shape that holds no memory (the fit's `feats`)."""
        return torch.zeros(()).expand(*self.shape)

    def read(self, items: slice | Tensor, device: torch.device) -> Arrival:
        """The grid's sites at `items` (a slice or item numbers), float32, checked finite, read
        for `device` in blocks of whole shards (`host_buffers.read_blocks`)."""
        n_items, n_sites, dim = self.shape
        rows = torch.arange(n_items)[items] if isinstance(items, slice) else items.cpu()
        per_block = max(1, READ_BYTES // self.row_bytes)
        blocks = shard_blocks(rows, self.features.shard_size, per_block)

        def fill(where: Where, buffer: Tensor) -> Tensor:
            x = self.features.read(sites=self.sites, items=rows[where], out=buffer)
            check_features(x, f"feats (FeatureSet sites {self.sites})")
            return x

        return read_blocks((len(rows), n_sites, dim), torch.float32, device, fill, blocks)

    def rows_on(self, items: slice | Tensor, device: torch.device) -> Float[Tensor, "row site dim"]:
        """The grid's sites at `items` on `device`."""
        return self.read(items, device).take().to(device)

    def attach(self, sweep: Any, step_chunk: int) -> None:
        """Make `sweep` (a grid trainer's state, `step_chunk` steps per task) train and evaluate
        on item blocks read from disk: the dev rows read now and kept, each epoch in phases."""
        device = sweep.targets.device
        dev_items = sweep.evaluator.dev_items
        dev_bytes = dev_items.numel() * self.row_bytes
        batch = sweep.config.batch_size
        per_chunk = len(sweep.streams.mask_sizes) * sweep.streams.n_streams * step_chunk * batch
        left = self.budget - dev_bytes
        self.span = left // (2 * per_chunk * self.row_bytes)  # chunks per phase, two held
        if self.span < 1:
            need = dev_bytes + 2 * per_chunk * self.row_bytes
            raise ProbeConfigError(
                f"TrainConfig.memory={format_bytes(self.budget)} is too small to stream this"
                f" grid: the dev items' features ({format_bytes(dev_bytes)}) and two parts of"
                f" {per_chunk} training rows need {format_bytes(need)}; give memory >= {need}"
                " bytes, or fewer sites or seeds"
            )
        kept = self.rows_on(dev_items, device)
        sweep.x = torch.zeros((), device=device).expand(*self.shape)  # stands for the features
        sweep.evaluator.x = _EvalRows(self, dev_items, kept)
        workers = resolve_threads(sweep.config.threads) if device.type == "cpu" else 1
        chunk = max(1, left // (workers * self.row_bytes))  # final evaluation: one per worker
        sweep.evaluator.chunk = min(sweep.evaluator.chunk, chunk)
        self.rows_per_chunk = step_chunk * batch
        sweep.phases = lambda rows, chunks: self.phases(sweep, rows, chunks)
        epoch_chunks = math.ceil(max(sweep.streams.steps) / step_chunk)
        parts = math.ceil(epoch_chunks / self.span)
        log.info(
            "fit_probes: sites %s stream each epoch in %d parts of item blocks (up to %d reads"
            " of their features per epoch)",
            self.sites,
            parts,
            parts,
        )

    def phases(
        self, sweep: Any, rows: Int[Tensor, "mask stream row"], chunks: list[int]
    ) -> Iterator[Phase]:
        """The epoch's training in parts of `span` chunks, each on the rows it gathers (read
        while the part before trains); sets `sweep.x` to each part's rows."""
        total, width = max(chunks), self.rows_per_chunk
        spans = [(a, min(a + self.span, total)) for a in range(0, total, self.span)]
        needed: dict[int, Tensor] = {}  # each part's rows, sorted (set by its read)

        def wanted(part: int) -> Int[Tensor, "mask stream row"]:
            a, z = spans[part]
            return rows[:, :, a * width : z * width].contiguous()

        def load(part: tuple[int, ...]) -> Arrival:
            needed[part[0]] = torch.unique(wanted(part[0]))
            return self.read(needed[part[0]], rows.device)

        placeholder = sweep.x
        parts = [(i,) for i in range(len(spans))]
        for (i,), x in site_groups(load, parts, prefetch=True):
            a, z = spans[i]
            at = torch.zeros_like(rows)
            at[:, :, a * width : z * width] = torch.searchsorted(needed.pop(i), wanted(i))
            sweep.x = x.to(rows.device)  # read there already on CUDA and the CPU
            yield [min(a, c) for c in chunks], [min(z, c) for c in chunks], at
            sweep.x = placeholder
            del x, at


class _EvalRows:
    """The features as the evaluator reads them: the dev rows from memory, any other rows (the
    final evaluation's blocks of items) from disk."""

    def __init__(self, stream: ItemStream, items: Tensor, kept: Tensor) -> None:
        self.stream, self.items, self.kept = stream, items, kept
        self.shape, self.device, self.dtype = stream.shape, kept.device, kept.dtype

    def element_size(self) -> int:
        return 4

    def __getitem__(self, key: int | slice) -> Tensor:
        if isinstance(key, slice):
            return self.stream.rows_on(key, self.device)
        return self.stream.rows_on(torch.tensor([key]), self.device)[0]

    def index_select(self, dim: int, items: Tensor) -> Tensor:
        at = torch.searchsorted(self.items, items).clamp(max=max(0, len(self.items) - 1))
        if len(self.items) and bool((self.items[at] == items).all()):
            return self.kept.index_select(0, at)
        return self.stream.rows_on(items, self.device)
