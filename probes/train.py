"""The minibatch AdamW grid trainer: every probe of a grid trained in one loop (Holmes protocol).

The work is cut into blocks of one mask and a range of (site, seed) units (`_grid/blocks.py`); a
block gathers its seeds' and sites' batch rows, each seed's dropout mask (drawn ahead) multiplies
them as they land in the block's input buffer, one batched matmul computes the logits of the
block's probes (variants fused along the output axis), the gradient is written by hand and one
fused AdamW step updates them. Worker threads (`_grid/workers.py`) take blocks `STEP_CHUNK` steps
at a time with no barrier inside an epoch (`_grid/chunk_schedule.py`); for linear probes a chunk
is one TorchScript call (`_grid/fused_steps.py`, bit-identical). Every random draw is keyed by the
probe's identity (`_grid/streams.py`), so results do not depend on the thread count or order, and
each probe's outcome equals training it alone with the same seed, up to float reassociation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
import polars as pl
import torch
from jaxtyping import Float, Int
from torch import Tensor
from tqdm.auto import tqdm

from lingprobe.feature_set import FeatureSet
from probes._grid.block_inputs import block_rows, gather_rows, input_layout, input_shape
from probes._grid.blocks import Block, covered_outer, covered_width, unit_groups
from probes._grid.chunk_schedule import ChunkSchedule, Draw, Task
from probes._grid.feature_set_fit import fit_feature_set
from probes._grid.fused_steps import FusedChunk
from probes._grid.inputs import (
    Targets,
    check_features,
    check_site_names,
    check_targets,
    grid_site_features,
    resolve_device,
    type_ids,
    warn_absent_classes,
)
from probes._grid.item_stream import ItemStream, Phases, whole_epoch
from probes._grid.masks import per_seed, plan_masks
from probes._grid.optim import MaskedAdamW
from probes._grid.streams import DropoutStreams, RowStreams
from probes._grid.workers import WorkerPool, resolve_threads, worker_pool
from probes.config import TrainConfig
from probes.control import variant_targets
from probes.errors import ProbeConfigError, ProbeInputError
from probes.evaluate import Evaluator
from probes.grid import ProbeGrid, ProbeLayout
from probes.heads import Head, make_head
from probes.mass_mean_fit import MASS_MEAN_KINDS, fit_mass_means
from probes.mdl import block_bounds, grid_codelengths, uniform_codelength
from probes.probe_kinds import make_probes
from probes.result_frames import codelength_frame, metrics_frame, unscored
from probes.results import ProbeResults
from probes.sample_complexity import with_loss_curves
from probes.splits import DEV, TRAIN, Splits, split_codes, warn_empty_test

STEP_CHUNK = 16  # steps a worker runs on one block before the next hand-out (not results)
RING = 4  # dropout draw slots per (mask, seed): a block may run RING - 1 chunks ahead (not results)


def fit_probes(
    feats: Float[Tensor, "item site dim"] | FeatureSet,
    targets: Tensor | np.ndarray,
    splits: Splits | Tensor | np.ndarray,
    grid: ProbeGrid | None = None,
    config: TrainConfig | None = None,
    *,
    keys: Tensor | np.ndarray | list | None = None,
    num_classes: int | None = None,
    device: torch.device | str | None = None,
    progress: bool = True,
    site_names: Sequence[str] | None = None,
) -> ProbeResults:
    """Train every probe of `grid` on `feats` together; metrics at each probe's best dev epoch.

    targets: `[item]` int class ids, `[item, class]` 0/1 (multi-label) or `[item]` floats.
    Class ids are 0..K-1 with K = `num_classes`, else the largest id + 1; sparse ids (one
    outlier such as 49,999 among small ids) are refused: map them to dense ids first.
    splits: a `Splits` or `[item]` codes (0 train, 1 dev, 2 test, -1 unused).
    keys: one control-task type per item (e.g. the word's surface string); without them the
    control labels are a shuffle of the targets. `site_names`: one name per site of `feats`
    (e.g. `internals.Site.name`), carried into `ProbeResults.table()`. `device`: default the
    features' accelerator,
    else CUDA when present, else CPU; the features are moved there whole (float16/bfloat16
    features stay so in memory and are computed on in float32). Results come back on the CPU.
    `feats` may be a `FeatureSet` on disk: it is read under `config.memory`, by groups of sites
    (see `TrainConfig`), with the same results; its `site_names` name the sites by default. On
    a CUDA device each group (or block of items) is read from disk into pinned host memory and
    copied to the device without blocking while the group before trains, and held there.

    Examples:
        >>> import torch
        >>> from probes import ProbeGrid, TrainConfig, fit_probes
        >>> targets = torch.arange(60) % 2
        >>> noise = torch.randn(60, 2, 4, generator=torch.Generator().manual_seed(0))
        >>> feats = noise + 3 * targets[:, None, None].float()  # [item, site, dim]
        >>> splits = torch.tensor([0] * 40 + [1] * 10 + [2] * 10)  # train, dev, test
        >>> config = TrainConfig(epochs=20, batch_size=8, lr=0.1)
        >>> grid = ProbeGrid(seeds=(0,))
        >>> result = fit_probes(feats, targets, splits, grid, config, progress=False)
        >>> test = result.table().filter(split="test", metric="accuracy")
        >>> test["site"].to_list(), bool((test["value"] >= 0.8).all())
        (['0', '1'], True)
    """
    grid, config = grid or ProbeGrid(), config or TrainConfig()
    options: dict[str, Any] = {"keys": keys, "num_classes": num_classes, "device": device}
    options["progress"] = progress
    fit = fit_mass_means if grid.kind in MASS_MEAN_KINDS else _fit  # closed form: no training
    if isinstance(feats, FeatureSet):  # read from disk under config.memory
        return fit_feature_set(feats, targets, splits, grid, config, fit, site_names, **options)
    return fit(feats, targets, splits, grid, config, site_names=site_names, **options)


def _fit(
    feats: Float[Tensor, "item site dim"],
    targets: Tensor | np.ndarray,
    splits: Splits | Tensor | np.ndarray,
    grid: ProbeGrid,
    config: TrainConfig,
    *,
    keys: Tensor | np.ndarray | list | None,
    num_classes: int | None,
    device: torch.device | str | None,
    progress: bool,
    site_names: Sequence[str] | None = None,
    stream: ItemStream | None = None,
) -> ProbeResults:
    """`fit_probes` of a tensor; with `stream`, `feats` only stands for the shape of the
    features that `stream` reads by item blocks as the fit goes."""
    if stream is None:
        check_features(feats)
    n_items, n_sites, _ = feats.shape
    codes = split_codes(splits, n_items)
    if grid.dev_masks is None and not bool((codes == DEV).any()):
        raise ProbeInputError(
            "splits: no item is in dev; the best epoch is chosen on dev (Holmes), so assign"
            " dev items (e.g. random_splits(n_items))."
        )
    warn_empty_test(codes)
    target = check_targets(targets, n_items, num_classes)
    head = make_head(target.kind, target.num_classes)
    select_by = config.select_by or head.primary
    if select_by != "loss" and select_by not in head.metric_names:
        raise ProbeConfigError(
            f"TrainConfig.select_by={select_by!r} is not a {target.kind} metric; use 'loss' or"
            f" one of {head.metric_names}."
        )
    if grid.mdl_blocks is not None and target.kind != "classification":
        raise ProbeConfigError("ProbeGrid.mdl: the online code needs classification targets.")
    layout = grid.layout(n_sites)
    dev = resolve_device(device, feats)
    ids = type_ids(keys, n_items) if keys is not None else None
    workers = resolve_threads(config.threads) if dev.type == "cpu" else 1
    x = grid_site_features(feats, layout.sites, dev) if stream is None else feats
    sweep = _Sweep(x, codes, target, ids, layout, head, select_by, grid, config, dev, workers)
    if stream is not None:
        stream.attach(sweep, STEP_CHUNK)
    explicit = grid.explicit_masks
    warn_absent_classes(target, codes, None if explicit is None else per_seed(explicit))
    check_site_names(site_names, n_sites, "feats (e.g. [s.name for s in sites])")
    with worker_pool(workers) as pool:
        sweep.run(progress, pool)
        results = sweep.results(pool)
    results.site_names = tuple(site_names) if site_names is not None else None
    return results


class _Sweep:
    """The state of one `fit_probes` call."""

    def __init__(
        self,
        feats: Float[Tensor, "item site dim"],
        codes: Int[Tensor, " item"],
        target: Targets,
        ids: Int[Tensor, " item"] | None,
        layout: ProbeLayout,
        head: Head,
        select_by: str,
        grid: ProbeGrid,
        config: TrainConfig,
        device: torch.device,
        workers: int,
    ) -> None:
        dim = feats.shape[2]
        self.layout, self.head, self.grid, self.config = layout, head, grid, config
        self.x = feats  # the grid's sites, on the device
        self.targets = variant_targets(target, ids, layout).to(device)
        keys = [config.order_seed] if config.shared_order else list(layout.seeds)
        self.plan = plan_masks(
            grid.explicit_masks,
            grid.explicit_dev_masks,
            layout.masks,
            codes,
            keys,
            len(layout.seeds),
        )
        self.streams = RowStreams(self.plan.members, keys, config.batch_size, device)
        # per-seed order over several sites: seeds outer (`blocks.py`), so that a block reads
        # each of its seeds' rows over every site, 20 KB at a time for 13 sites of 384 floats,
        # not 1.5 KB per (site, seed): one core gathers rows of 20 KB at 12-13 GB/s, of 1.5 KB
        # at 7 GB/s. One site gains nothing, and its seeds would be cut into more blocks than
        # its one site (curriculum inoculation, 1 site x 3 seeds x 15 masks: 21.7 -> 28.2 s)
        self.seeds_outer = self.streams.n_streams > 1 and self.x.shape[1] > 1
        self.dropout = DropoutStreams(
            layout.seeds,
            self.plan.sizes,
            config.dropout,
            config.batch_size,
            dim,
            STEP_CHUNK,
            RING,
            device,
        )
        self.probes = make_probes(grid, layout, dim, head.outputs, self.seeds_outer)
        self.probes.to(device)
        self.evaluator = Evaluator(
            self.x,
            codes,
            self.targets,
            layout,
            head,
            self.probes,
            config.eval_batch,
            select_by,
            self.plan.dev,
        )
        self.codes, self.target = codes, target
        compute = torch.bfloat16 if config.compute == "bfloat16" else torch.float32
        n_sites, batch = layout.shape[2], config.batch_size
        n_seeds = len(layout.seeds)
        state = self.probes.unit_state_bytes() if device.type == "cpu" else 0
        n_outer, inner = (n_seeds, n_sites) if self.seeds_outer else (n_sites, n_seeds)
        self.n_inner = inner
        groups = unit_groups(n_outer, inner, workers, state)
        self.blocks: list[Block] = [(m, g) for m in range(len(self.plan.sizes)) for g in groups]
        self.fused: FusedChunk | None = None  # set by `run`
        self.phases: Phases = whole_epoch  # an epoch's training on parts of self.x in turn
        # each block's input buffer of batch rows, and its layout (`block_inputs.py`)
        self.inputs: dict[tuple[int, int], tuple[int, Tensor]] = {}
        for m, g in self.blocks:
            covered = covered_width(g, inner)
            lay = input_layout(self.seeds_outer, covered, self.x.dtype == compute)
            shape = input_shape(lay, covered, inner, batch, dim)
            self.inputs[(m, g.start)] = lay, torch.zeros(shape, dtype=compute, device=device)
        units = torch.arange(n_sites * n_seeds, device=device)
        self.unit_seed = units // n_sites if self.seeds_outer else units % n_seeds

    def run(self, progress: bool, pool: WorkerPool) -> None:
        """All epochs: training steps block by block, then the dev selection of each epoch."""
        n_seeds = self.layout.shape[1]
        names = list(self.probes.params)
        self.opt = MaskedAdamW(
            [self.probes.params[n] for n in names],
            [self.probes.grads[n] for n in names],
            self.streams.steps,
            self.config,
            self.blocks,
        )
        self.fused = FusedChunk.for_grid(self.probes, self.opt, self.config, self.head)
        seed_ix = torch.arange(n_seeds, device=self.x.device)[None, :, None]
        by_item = self.targets.movedim(2, 0)  # [item, seed, variant, *label]
        streams = self.streams.n_streams
        epochs = tqdm(range(self.config.epochs), disable=not progress, desc="probes", unit="epoch")
        chunks = [math.ceil(steps / STEP_CHUNK) for steps in self.streams.steps]
        masks = [m for m, _ in self.blocks]
        for epoch in epochs:
            rows, weight = self.streams.epoch()
            expanded = rows.expand(-1, n_seeds, -1) if streams == 1 else rows
            targets = by_item[expanded, seed_ix]  # [mask, seed, row, var, *label]
            if self.fused is None or not self.fused.class_ids:
                targets = self.head.encode(targets)  # [mask, seed, row, var, out]
            targets = targets.movedim(2, -1).contiguous()  # [mask, seed, var, (out,) row]
            for first, stop, at in self.phases(rows, chunks):  # `at`: rows in self.x
                schedule = ChunkSchedule(masks, stop, n_seeds, RING, first)
                task = partial(self._task, epoch=epoch, rows=at, weight=weight, targets=targets)
                pool.drain(schedule, task, width=len(self.blocks) + len(chunks) * n_seeds)
            self.probes.keep_best(self.evaluator.select(epoch, pool))

    def _task(self, task: Task, epoch: int, rows: Tensor, weight: Tensor, targets: Tensor) -> None:
        """A (mask, seed)'s dropout draws for a chunk, or a block's chunk of steps."""
        start = task.chunk * STEP_CHUNK
        if isinstance(task, Draw):
            self._keep((task.chunk % RING, task.mask, task.seed, start))
        else:
            block, slot = self.blocks[task.block], task.chunk % RING
            self._steps(block, epoch, start, slot, rows, weight, targets)

    def _keep(self, draw: tuple[int, int, int, int]) -> None:
        """Draw the dropout keep masks of (mask, seed) for steps `start..` into `slot`."""
        slot, m, s, start = draw
        b, n = self.config.batch_size, self.plan.sizes[m]
        stop = min(start + STEP_CHUNK, self.streams.steps[m])
        self.dropout.draw(slot, m, s, [min(b, n - step * b) for step in range(start, stop)])

    def _steps(
        self,
        block: Block,
        epoch: int,
        start: int,
        slot: int,
        rows: Tensor,
        weight: Tensor,
        targets: Tensor,
    ) -> None:
        """Steps `start..start + STEP_CHUNK` of a block (mask m, a range of (site, seed) units):
        gather the batches of all seeds at the sites it covers, dropout, logits, gradient and
        AdamW. Per step: left unannotated."""
        m, units = block
        n_var, b = self.layout.shape[3], self.config.batch_size
        n_streams, n_items = self.streams.n_streams, self.x.shape[0]
        outer = covered_outer(units, self.n_inner)
        offset = units.start - outer.start * self.n_inner
        (lay, inputs), steps = self.inputs[(m, units.start)], self.streams.steps[m]
        keep = self.dropout.buffer[slot, m]  # [seed, step, batch, dim]
        stop = min(start + STEP_CHUNK, steps)
        seed = self.unit_seed[units]  # each unit's seed, and its stream of batch rows
        rows_of = slice(start * b, stop * b)
        unit_targets = targets[m][..., rows_of].index_select(0, seed)  # [unit, var, (out,) row]
        unit_weight = weight[m][:, rows_of].index_select(0, seed if n_streams > 1 else 0 * seed)
        if self.seeds_outer:  # the covered seeds' rows over every site: [item, site * dim]
            source, streams = self.x.view(n_items, -1), rows[m, outer]
            keep = keep[outer].unsqueeze(2)  # [seed, step, 1 (site), batch, dim]
        else:  # the rows at the covered sites: [item, covered site * dim], a view (rows strided)
            source, streams = self.x[:, outer].reshape(n_items, -1), rows[m]
        if self.fused is not None:  # the same steps as below, in one TorchScript call
            chunk = (source, streams, keep, inputs, lay)
            steps_run = range(start, stop)
            self.fused(block, chunk, unit_targets, unit_weight, steps_run, epoch * steps, offset)
            return
        x = block_rows(inputs, lay)[offset : offset + units.stop - units.start]  # [unit, b, dim]
        for step in range(start, stop):
            part = slice(step * b, (step + 1) * b)  # of the epoch's rows
            mine = slice((step - start) * b, (step - start + 1) * b)  # of this chunk's
            at = streams[:, part].reshape(-1)
            gather_rows(source, at, keep[:, step - start], inputs, lay, streams.shape[0])
            logits, cache = self.probes.forward(block, x)  # [unit, variant * out, batch]
            shaped = logits.view(x.shape[0], n_var, logits.shape[1] // n_var, b)
            w = unit_weight[:, None, None, mine]  # [unit, 1, 1, batch]
            grad = self.head.grad(shaped, unit_targets[..., mine], w)
            self.probes.backward(block, x, cache, grad.view(logits.shape))
            self.opt.step(block, epoch * steps + step)

    def train_members(self) -> Tensor:
        """`[probe, item]`: whether an item is in the probe's training mask."""
        n_seeds = self.layout.shape[1]
        members = self.plan.train_membership(self.x.shape[0], n_seeds, self.config.shared_order)
        return self.layout.per_probe(members).to(self.x.device)

    def results(self, pool: WorkerPool) -> ProbeResults:
        """Final evaluation with each probe's best-epoch parameters."""
        blocks = self.grid.mdl_blocks
        members = self.train_members()
        scores, bits = self.evaluator.final(members, with_bits=blocks is not None, pool=pool)
        diverged = self.evaluator.diverged_epoch.cpu()
        scores = unscored(scores, diverged)
        frame = self.layout.frame().with_columns(
            best_epoch=self.evaluator.best_epoch.cpu().numpy(),
            diverged_epoch=pl.Series(diverged.numpy()).replace(0, None),
        )
        codelengths = None
        if blocks is not None and bits is not None and self.plan.orders is not None:
            n_train, k = int((self.codes == TRAIN).sum()), self.target.num_classes
            seeds = range(len(self.layout.seeds))
            orders = [self.plan.orders[0 if self.config.shared_order else s] for s in seeds]
            online = grid_codelengths(
                bits.cpu(),
                self.layout.shape,
                [self.layout.masks.index(f) for f in blocks.probe_fractions],
                block_bounds(blocks, n_train),
                orders,
                k,
            )
            online[(diverged > 0).view(self.layout.shape).any(dim=0)] = torch.nan
            lay, uniform = self.layout, uniform_codelength(n_train, k)
            codelengths = codelength_frame(online, lay.seeds, lay.sites, lay.variants, uniform)
            codelengths = with_loss_curves(codelengths, bits, lay, blocks, self.codes, k, diverged)
        return ProbeResults(
            probes=frame,
            metrics=metrics_frame(scores),
            weights=self.probes.export(self.probes.best),
            codelengths=codelengths,
            kind=self.grid.kind,
            head=self.target.kind,
            test=self.evaluator.test,
            mask_kind=(
                "mask_id"
                if self.grid.explicit_masks is not None
                else "mdl_block"
                if self.grid.mdl_blocks is not None
                else "train_fraction"
            ),
        )
