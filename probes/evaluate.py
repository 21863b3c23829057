"""Evaluation of every probe at once: best epoch on dev, final metrics per split, MDL bits.

All probes of a site read an evaluation chunk once: one `[items, dim] @ [dim, probes * out]`
GEMM per site (no dropout, so every seed, mask and variant shares the rows). `final` also
keeps every probe's test predictions (`test`), for the bootstrap and the paired tests, and for
classification probes their class log-probabilities there, scored by AUROC and recall at 1 %
false positives (`probes.rank_metrics`; test split only, where the scores are kept).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import torch
from jaxtyping import Bool, Float, Int, Shaped
from torch import Tensor

from probes._grid.workers import WorkerPool
from probes.batched_probes import BatchedProbes
from probes.grid import ProbeLayout
from probes.heads import ClassificationHead, Head
from probes.metric_table import higher_is_better
from probes.predictions import TestPredictions
from probes.rank_metrics import rank_metrics
from probes.splits import DEV, SPLIT_NAMES, TEST, TRAIN

CHUNK_BYTES = 1 << 24  # bound on one evaluation chunk's activations (memory, not results)
EVAL_ROWS_MIN = 256  # smallest chunk cut to share evaluation between workers (not results)
# bound on one chunk's gathered rows (dev selection): a large block is fresh pages each epoch,
# whose faults cost more than the gather (measured in benchmarks/HISTORY.md)
GATHER_BYTES = 1 << 23
T = TypeVar("T")


class Evaluator:
    """Scores the probes on dev after each epoch and on every split at the end."""

    def __init__(
        self,
        x: Float[Tensor, "item site dim"],
        codes: Int[Tensor, " item"],
        targets: Shaped[Tensor, " seed variant item *label"],
        layout: ProbeLayout,
        head: Head,
        probes: BatchedProbes,
        eval_batch: int,
        select_by: str,
        dev: Bool[Tensor, "mask seed item"] | None = None,
    ) -> None:
        self.x, self.codes, self.head, self.probes = x, codes, head, probes
        self.layout, self.select_by = layout, select_by
        index = layout.axis_index().to(x.device)
        n_var = layout.shape[3]
        self.target_row = index[1] * n_var + index[3]  # probe -> (seed, variant) row
        self.targets = targets.reshape(-1, *targets.shape[2:])  # [seed*variant, item, *label]
        width = max(head.outputs, getattr(probes, "hidden", 0))
        self.chunk = max(1, min(eval_batch, CHUNK_BYTES // (4 * width * layout.n_probes)))
        self.dev_members = None if dev is None else layout.per_probe(dev).to(x.device)
        dev_any = codes == DEV if dev is None else dev.any(dim=1).any(dim=0)
        self.dev_items = dev_any.nonzero().flatten().to(x.device)
        self.dev_include = (
            None if self.dev_members is None else self.dev_members.index_select(1, self.dev_items)
        )
        self.best_value = torch.full(
            (layout.n_probes,), -torch.inf, dtype=torch.float64, device=x.device
        )
        self.best_epoch = torch.zeros(layout.n_probes, dtype=torch.int64, device=x.device)
        # epoch (from 1) at which a probe's parameters or dev loss stopped being finite; 0: never
        self.diverged_epoch = torch.zeros(layout.n_probes, dtype=torch.int64, device=x.device)
        self.test: TestPredictions | None = None  # set by `final`

    def probe_targets(self, items: Int[Tensor, " item"]) -> Shaped[Tensor, " probe item *label"]:
        """Each probe's targets (task or its seed's control labels) for `items`."""
        return self.targets.index_select(1, items).index_select(0, self.target_row)

    def chunked(
        self,
        items: Int[Tensor, " item"] | None,
        tensors: dict[str, Tensor],
        fn: Callable[[Int[Tensor, " chunk"], Tensor], T],
        pool: WorkerPool,
    ) -> list[T]:
        """`fn(items, site-major logits [site, chunk, site_probe, out])` of every chunk of
        `items` (None: every item, read in place), computed by the pool's workers."""
        n = self.x.shape[0] if items is None else items.shape[0]
        chunk = self.chunk
        if pool.executor is not None:  # enough chunks to share, whatever their size
            chunk = max(1, min(chunk, max(EVAL_ROWS_MIN, -(-n // (4 * pool.workers)))))
        if items is not None:  # gathered rows: a block the allocator reuses without new pages
            row_bytes = self.x[0].numel() * self.x.element_size()
            chunk = max(1, min(chunk, GATHER_BYTES // row_bytes))
        weights = self.probes.eval_weights(tensors)

        def one(start: int) -> T:
            if items is None:
                part = torch.arange(start, min(n, start + chunk), device=self.x.device)
                xs = self.x[start : start + chunk]
            else:
                part = items[start : start + chunk]
                xs = self.x.index_select(0, part)
            return fn(part, self.probes.logits(weights, xs.transpose(0, 1).float()))

        return pool.map(one, range(0, n, chunk))

    def site_major_targets(self, items: Int[Tensor, " item"]) -> Tensor:
        """`probe_targets(items)` in the site-major evaluation layout."""
        return self.layout.to_site_major(self.probe_targets(items))

    def select(self, epoch: int, pool: WorkerPool) -> Bool[Tensor, "mask seed site variant"]:
        """Score the current parameters on dev; record and return the probes that improved."""

        def score(part: Tensor, logits: Tensor) -> Tensor:
            if self.select_by == "loss":
                loss = self.head.item_loss(logits, self.site_major_targets(part))
                return self.layout.from_site_major(loss)
            return self.layout.from_site_major(self.head.predict(logits))

        scored = self.chunked(self.dev_items, self.probes.params, score, pool)
        include = self.dev_include
        if self.select_by == "loss":
            loss = torch.cat(scored, dim=1)
            if include is None:
                value = loss.mean(dim=1)
            else:
                value = (loss * include).sum(dim=1) / include.sum(dim=1)
        else:
            truth = self.probe_targets(self.dev_items)
            value = self.head.metrics(torch.cat(scored, dim=1), truth, include)[self.select_by]
        # the best epoch has the largest score: the metric, or minus one that is lower-better
        value = value.double() * (1.0 if higher_is_better(self.select_by) else -1.0)
        finite = self.probes.finite().reshape(-1)
        if self.select_by == "loss":  # a metric may be NaN legitimately (pearson of a constant)
            finite &= torch.isfinite(value)
        fresh = ~finite & (self.diverged_epoch == 0)
        self.diverged_epoch = torch.where(fresh, epoch + 1, self.diverged_epoch)
        improved = (value > self.best_value) & (self.diverged_epoch == 0)  # NaN never improves
        self.best_value = torch.where(improved, value, self.best_value)
        self.best_epoch = torch.where(improved, epoch + 1, self.best_epoch)
        return improved.view(self.layout.shape)

    def final(
        self, train_members: Bool[Tensor, "probe item"], with_bits: bool, pool: WorkerPool
    ) -> tuple[dict[str, dict[str, Tensor]], Float[Tensor, "probe item"] | None]:
        """Metrics per split of the best-epoch parameters, and (`with_bits`, classification)
        the bits of every item under every probe. Train metrics use each probe's train mask,
        dev metrics its dev mask when the grid has explicit dev masks."""
        items = torch.arange(self.x.shape[0], device=self.x.device)
        head = self.head

        classes = isinstance(head, ClassificationHead)
        is_test = self.codes.to(self.x.device) == TEST

        def score(part: Tensor, logits: Tensor) -> tuple[Tensor, Tensor | None, Tensor | None]:
            pred = self.layout.from_site_major(head.predict(logits))
            # class log-probabilities of the test rows, for the rank metrics
            rows = is_test[part].nonzero().flatten()
            lp = logits.index_select(1, rows).log_softmax(-1) if classes else None
            lp = None if lp is None else self.layout.from_site_major(lp)
            if with_bits and isinstance(head, ClassificationHead):
                item_bits = head.item_bits(logits, self.site_major_targets(part))
                return pred, self.layout.from_site_major(item_bits), lp
            return pred, None, lp

        scored = self.chunked(None, self.probes.best, score, pool)
        pred = torch.cat([p for p, _, _ in scored], dim=1)
        bits = [b for _, b, _ in scored if b is not None]
        truth = self.probe_targets(items)
        test_items = (self.codes == TEST).nonzero().flatten()
        at = test_items.to(pred.device)
        self.test = TestPredictions.compact(
            test_items,
            pred.index_select(1, at),
            self.targets.index_select(1, at),
            self.target_row,
            self.head.kind,
            self.head.outputs,
            torch.cat([s for _, _, s in scored if s is not None], dim=1) if classes else None,
        )
        scores = {}
        for code, split in enumerate(SPLIT_NAMES):
            include = self.codes.to(pred.device)[None, :] == code
            if code == TRAIN:
                include = include & train_members
            elif code == DEV and self.dev_members is not None:
                include = self.dev_members
            include = include.expand(pred.shape[0], -1)
            scores[split] = self.head.metrics(pred, truth, include)
        if self.test.scores is not None and self.test.n_items:
            ranked = rank_metrics(self.test.scores, self.test.truth())
            scores["test"].update({m: v[0] for m, v in ranked.items()})
        return scores, torch.cat(bits, dim=1) if bits else None
