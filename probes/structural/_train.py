"""`fit_structural_probes`: every (seed, site, rank) structural probe trained in one loop.

Per step, each seed's minibatch of sentences is gathered once for all its sites and ranks; one
batched matmul projects the words of every probe; each probe's gradient of its own loss is
written out (`loss_gradient`, no autograd graph); one vectorised Adam step (each probe with its
own learning rate) updates them all. After every epoch the dev loss of every
probe drives its own learning-rate decay, best-epoch snapshot and early stop, exactly as the
reference regimen does for one probe (regimen.py `train_until_convergence`); a stopped probe is
frozen while the others go on. Shuffles and initialisations are keyed by the probe's identity,
so a probe trained in a grid equals it trained alone, up to float reassociation.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import torch
from jaxtyping import Float, Int
from torch import Tensor
from tqdm.auto import tqdm

from lingprobe.feature_set import FeatureSet
from probes._grid.inputs import check_features, resolve_device
from probes._grid.site_reader import in_memory
from probes.errors import ProbeInputError
from probes.result_frames import metrics_frame
from probes.splits import DEV, SPLIT_NAMES, TEST, TRAIN, Splits, split_codes
from probes.structural._metrics import StructuralKind, length_chunks, score_sentences
from probes.structural._probe import (
    StructuralConfig,
    StructuralGrid,
    StructuralLayout,
    initial_projection,
    loss_gradient,
    order_generator,
    predict,
    project,
    sentence_losses,
)
from probes.structural._results import StructuralResults
from probes.structural._site_groups import fit_in_site_groups
from probes.structural._trees import PaddedTrees, SentenceTrees

KINDS = ("distance", "depth")


def fit_structural_probes(
    feats: Float[Tensor, "word site dim"] | FeatureSet,
    trees: SentenceTrees,
    splits: Splits | Tensor | np.ndarray,
    kind: StructuralKind = "distance",
    grid: StructuralGrid | None = None,
    config: StructuralConfig | None = None,
    *,
    device: torch.device | str | None = None,
    progress: bool = True,
) -> StructuralResults:
    """Train every distance (or depth) probe of `grid` on the words' features together.

    feats: one row per word, in the order of `trees` (sentence after sentence). splits: one
    code per sentence (0 train, 1 dev, 2 test, -1 unused); dev drives the regimen; metrics are
    reported on dev and test. `device` as in `fit_probes`; results come back on the CPU.
    `feats` may be a `FeatureSet`: the grid's sites are read from it once, in groups of sites
    that fit `config.memory` (each group trained to the end before the next is read), with the
    results of the fit of every site at once; for a CUDA device each group goes from disk
    through pinned host memory to the device while the group before trains.
    """
    grid, config = grid or StructuralGrid(), config or StructuralConfig()
    if kind not in KINDS:
        raise ProbeInputError(f"kind={kind!r}; choose 'distance' or 'depth'.")
    if isinstance(feats, Tensor):
        check_features(feats)
    if feats.shape[0] != len(trees.heads):
        raise ProbeInputError(
            f"feats has {feats.shape[0]} rows but the trees hold {len(trees.heads)} words; give"
            " one feature row per word, in the trees' order."
        )
    codes = split_codes(splits, trees.n_sentences)
    for code in (TRAIN, DEV):
        if not bool((codes == code).any()):
            raise ProbeInputError(
                f"splits: no sentence is in {SPLIT_NAMES[code]}; the regimen trains on train and"
                " decays the learning rate and stops on dev."
            )
    layout = grid.layout(feats.shape[1], feats.shape[2])

    def fit(x: Float[Tensor, "word grid_site dim"], part: StructuralLayout) -> StructuralResults:
        run = _Run(x, trees, codes, kind, part, config, resolve_device(device, x))
        run.train(progress)
        return run.results()

    if isinstance(feats, FeatureSet):
        return fit_in_site_groups(feats, layout, config, fit, resolve_device(device, None))
    return fit(in_memory(feats, layout.sites), layout)


class _Run:
    """The state of one `fit_structural_probes` call."""

    def __init__(
        self,
        feats: Float[Tensor, "word grid_site dim"],
        trees: SentenceTrees,
        codes: Int[Tensor, " sentence"],
        kind: StructuralKind,
        layout: StructuralLayout,
        config: StructuralConfig,
        device: torch.device,
    ) -> None:
        self.trees, self.codes, self.kind = trees, codes, kind
        self.layout, self.config, self.device = layout, config, device
        self.x = feats.to(device)  # the grid's sites
        s, t, r = layout.shape
        dim, width = feats.shape[2], layout.width
        start = torch.stack(
            [
                initial_projection(seed, site, rank, dim, width, config.init_range)
                for seed in layout.seeds
                for site in layout.sites
                for rank in layout.ranks
            ]
        )
        self.proj = start.view(s, t, r, dim, width).to(device)
        self.columns = layout.rank_mask(device)[None, None, :, None, :].float()
        self.gold = (
            trees.all_distances().to(device) if kind == "distance" else trees.depths().to(device)
        )
        self.train_ids = (codes == TRAIN).nonzero().flatten()
        self.dev_batches = [
            trees.padded(part).to(device)
            for part in length_chunks(trees, (codes == DEV).nonzero().flatten(), config.eval_batch)
        ]
        self.best = self.proj.clone()
        shape = layout.shape
        self.best_loss = torch.full(shape, math.inf, device=device, dtype=torch.float64)
        self.best_epoch = torch.zeros(shape, dtype=torch.int64, device=device)
        self.epochs_run = torch.zeros(shape, dtype=torch.int64, device=device)

    def _gold(self, batch: PaddedTrees) -> Tensor:
        if self.kind == "distance":
            return self.trees.gather_distances(self.gold, batch)
        return torch.where(batch.mask, self.gold[batch.index], 0.0)

    def _inputs(self, batch: PaddedTrees, seeds: int) -> tuple[Tensor, Tensor]:
        """Projected-word rows `[seed_or_one, site, n, dim]` and their padded slots."""
        b, w = batch.mask.shape
        mask = batch.mask.view(seeds, -1)
        index = batch.index.view(seeds, -1)
        counts = mask.sum(-1)
        n = int(counts.max())
        order = (~mask).int().argsort(dim=-1, stable=True)[:, :n]
        filled = torch.arange(n, device=mask.device)[None, :] < counts[:, None]
        words = torch.where(filled, index.gather(1, order), 0)
        slots = torch.where(filled, order, (b // seeds) * w)
        x = self.x[words.flatten()].view(seeds, n, *self.x.shape[1:]).transpose(1, 2)
        return x.float(), slots

    def _losses(self, proj: Tensor, batch: PaddedTrees, seeds: int) -> Tensor:
        """Per-sentence losses `[seed, site, rank, sentence]` (sentences of each seed)."""
        x, slots = self._inputs(batch, seeds)
        b, w = batch.mask.shape
        pred = predict(project(x, proj), slots, b // seeds, w, self.kind)
        gold = self._gold(batch).view(seeds, b // seeds, *self._gold_tail(w))
        mask = batch.mask.view(seeds, b // seeds, w)
        return sentence_losses(pred, gold, mask, batch.lengths.view(seeds, -1), self.kind)

    def _gradient(self, batch: PaddedTrees, seeds: int) -> Tensor:
        """Every probe's gradient of its mean loss over its seed's sentences of `batch`, one
        site at a time: a site's per-pair intermediates stay in cache, where the whole grid's
        would not (each probe's arithmetic is the same either way)."""
        x, slots = self._inputs(batch, seeds)
        b, w = batch.mask.shape
        gold = self._gold(batch).view(seeds, b // seeds, *self._gold_tail(w))
        mask = batch.mask.view(seeds, b // seeds, w)
        lengths = batch.lengths.view(seeds, -1)
        grad = torch.empty_like(self.proj)
        for site in range(self.proj.shape[1]):
            at = slice(site, site + 1)
            grad[:, at] = loss_gradient(
                x[:, at], self.proj[:, at], slots, gold, mask, lengths, self.kind
            )
        return grad

    def _gold_tail(self, w: int) -> tuple[int, ...]:
        return (w, w) if self.kind == "distance" else (w,)

    def train(self, progress: bool) -> None:
        """Every epoch: Adam steps over each seed's shuffled batches, then the dev regimen."""
        c, (s, t, r) = self.config, self.layout.shape
        gens = [order_generator(seed) for seed in self.layout.seeds]
        m = torch.zeros_like(self.proj)
        v = torch.zeros_like(self.proj)
        lr = torch.full((s, t, r), c.lr, device=self.device, dtype=torch.float64)
        plateau_best = torch.full_like(self.best_loss, math.inf)
        bad = torch.zeros_like(self.best_epoch)
        stopped = torch.zeros((s, t, r), dtype=torch.bool, device=self.device)
        n_train, step = len(self.train_ids), 0
        bar = tqdm(range(c.epochs), disable=not progress, desc="structural probes", unit="epoch")
        for epoch in bar:
            shuffles = [torch.randperm(n_train, generator=g) for g in gens]
            orders = torch.stack([self.train_ids[p] for p in shuffles])
            for lo in range(0, n_train, c.batch_size):
                batch = self.trees.padded(orders[:, lo : lo + c.batch_size].flatten())
                batch = batch.to(self.device)
                grad = self._gradient(batch, s)
                step += 1
                live = torch.where(stopped, 0.0, lr).float()[..., None, None]
                _adam(self.proj, grad * self.columns, m, v, live, step, c)
            self.epochs_run += (~stopped).long()
            dev_loss = self._dev_loss()
            better = dev_loss < plateau_best * (1 - c.decay_threshold)
            plateau_best = torch.where(better, dev_loss, plateau_best)
            bad = torch.where(better, 0, bad + 1)
            cut = (bad > c.decay_patience) & (lr - lr * c.decay_factor > 1e-8)
            lr = torch.where(cut, lr * c.decay_factor, lr)
            bad = torch.where(bad > c.decay_patience, 0, bad)
            improved = (dev_loss < self.best_loss - c.stop_delta) & ~stopped
            self.best = torch.where(improved[..., None, None], self.proj, self.best)
            self.best_loss = torch.where(improved, dev_loss, self.best_loss)
            self.best_epoch = torch.where(improved, epoch, self.best_epoch)
            stopped |= ~improved & (self.best_epoch < epoch - c.stop_patience)
            if bool(stopped.all()):
                break

    @torch.no_grad()
    def _dev_loss(self) -> Tensor:
        """Mean normalised loss over the dev sentences, per probe `[seed, site, rank]`."""
        total = torch.zeros(self.layout.shape, dtype=torch.float64, device=self.device)
        count = 0
        for batch in self.dev_batches:
            total += self._losses(self.proj, batch, 1).double().sum(-1)
            count += batch.mask.shape[0]
        return total / count

    @torch.no_grad()
    def _predict(self, batch: PaddedTrees) -> Tensor:
        """Best-epoch predictions of every probe `[probe, batch, width(, width)]`."""
        x, slots = self._inputs(batch, 1)
        b, w = batch.mask.shape
        pred = predict(project(x, self.best), slots, b, w, self.kind)
        return pred.reshape(self.layout.n_probes, b, *pred.shape[4:])

    def results(self) -> StructuralResults:
        """Metrics of the best-epoch probes on dev and test."""
        scores = {}
        for code, name in ((DEV, "dev"), (TEST, "test")):
            chosen = (self.codes == code).nonzero().flatten()
            if len(chosen):
                scores[name] = score_sentences(
                    self._predict,
                    self.trees,
                    chosen,
                    self.kind,
                    self.layout.n_probes,
                    device=self.device,
                    chunk=self.config.eval_batch,
                )
        probes = self.layout.frame().with_columns(
            best_epoch=pl.Series((self.best_epoch + 1).flatten().cpu().numpy()),
            epochs=pl.Series(self.epochs_run.flatten().cpu().numpy()),
            dev_loss=pl.Series(self.best_loss.flatten().cpu().numpy()),
        )
        n, (d, k) = self.layout.n_probes, self.best.shape[-2:]
        return StructuralResults(
            self.kind, probes, metrics_frame(scores), self.best.reshape(n, d, k).cpu()
        )


def _adam(
    param: Tensor,
    grad: Tensor,
    exp_avg: Tensor,
    exp_avg_sq: Tensor,
    lr: Tensor,
    step: int,
    config: StructuralConfig,
) -> None:
    """torch.optim.Adam's update (no weight decay) with a learning rate per probe."""
    beta1, beta2 = config.betas
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    step_size = lr / (1 - beta1**step)
    denom = (exp_avg_sq.sqrt() / math.sqrt(1 - beta2**step)).add_(config.eps)
    param.sub_(step_size * exp_avg / denom)
