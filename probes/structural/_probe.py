"""Structural probes (Hewitt & Manning 2019): what they compute, their grid, their settings.

A probe is a matrix `B [dim, rank]`. The distance probe predicts `||B^T (h_i - h_j)||^2` for
every word pair of a sentence, trained with the L1 loss `sum_ij |pred - d_tree(i, j)| / len^2`;
the depth probe predicts `||B^T h_i||^2`, loss `sum_i |pred - depth_i| / len` (loss.py
`L1DistanceLoss`, `L1DepthLoss`); the batch loss is the mean over its sentences.
A grid holds every (seed, site, rank) probe as one tensor `[seed, site, rank, dim, width]` whose
columns past each probe's rank are zero (and stay zero: their gradient is zero).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl
import torch
from jaxtyping import Bool, Float, Int
from torch import Tensor

from probes._grid.memory_budget import checked_memory, memory_bytes
from probes._grid.streams import keyed_generator
from probes.errors import ProbeConfigError
from probes.structural._metrics import StructuralKind


@dataclass(frozen=True)
class StructuralConfig:
    """How every structural probe is trained: john-hewitt/structural-probes' regimen.

    Adam, a learning rate cut tenfold whenever the dev loss fails to improve (ReduceLROnPlateau,
    patience 0), the parameters of the best dev epoch kept, and training stopped once the best
    epoch is more than `stop_patience` epochs old.

    `memory` (bytes, or a size such as `"4GiB"`; see `probes._grid.memory_budget`) bounds the
    float32 features held when `fit_structural_probes` reads a `FeatureSet`: it reads a group of
    sites that fits, trains every probe of those sites to the end and reads the next group while
    one trains, each byte once per fit; the results equal the fit of every site at once. `None`
    reads every site of the grid at once; a tensor is already in memory and ignores it.
    """

    @property
    def memory_bytes(self) -> int | None:
        """`memory` in bytes (None: no bound)."""
        return memory_bytes(self.memory)

    epochs: int = 40  # example/config/naacl19/bert-base/*.yaml: probe_training.epochs 40
    batch_size: int = 20  # naacl19 BERT configs: dataset.batch_size 20 (sentences)
    lr: float = 1e-3  # regimen.py set_optimizer: optim.Adam(lr=0.001)
    decay_factor: float = 0.1  # regimen.py: ReduceLROnPlateau(mode='min', factor=0.1, ...)
    decay_patience: int = 0  # regimen.py: ReduceLROnPlateau(..., patience=0)
    decay_threshold: float = 1e-4  # torch ReduceLROnPlateau default (relative threshold)
    stop_delta: float = 1e-4  # regimen.py: a dev loss counts as better when 0.0001 lower
    stop_patience: int = 4  # regimen.py: stop when the best epoch < current epoch - 4
    init_range: float = 0.05  # probe.py: nn.init.uniform_(proj, -0.05, 0.05)
    betas: tuple[float, float] = (0.9, 0.999)  # torch.optim.Adam default
    eps: float = 1e-8  # torch.optim.Adam default
    eval_batch: int = 64  # sentences per evaluation chunk (memory, not results)
    memory: int | str | None = None  # bound on the features read from a FeatureSet; not results

    def __post_init__(self) -> None:
        checked_memory(self.memory, "StructuralConfig.memory")
        checks = {
            "epochs": self.epochs >= 1,
            "batch_size": self.batch_size >= 1,
            "lr": self.lr > 0,
            "decay_factor": 0 < self.decay_factor <= 1,
            "decay_patience": self.decay_patience >= 0,
            "decay_threshold": self.decay_threshold >= 0,
            "stop_delta": self.stop_delta >= 0,
            "stop_patience": self.stop_patience >= 0,
            "init_range": self.init_range > 0,
            "betas": all(0 <= b < 1 for b in self.betas),
            "eps": self.eps > 0,
            "eval_batch": self.eval_batch >= 1,
        }
        for name, ok in checks.items():
            if not ok:
                raise ProbeConfigError(
                    f"StructuralConfig.{name}={getattr(self, name)!r} is out of range; see the"
                    " field's comment."
                )


@dataclass(frozen=True)
class StructuralGrid:
    """Which structural probes to train: every (seed, site, rank).

    A rank of None is the features' full width (the naacl19 BERT configs set
    `maximum_rank` to the hidden size); `sites=None` takes every site of the features.
    """

    seeds: Sequence[int] = (0,)
    ranks: Sequence[int | None] = (None,)
    sites: Sequence[int] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
        object.__setattr__(self, "ranks", tuple(None if r is None else int(r) for r in self.ranks))
        if self.sites is not None:
            object.__setattr__(self, "sites", tuple(int(s) for s in self.sites))
        problems = {
            "seeds": len(self.seeds) == 0 or len(set(self.seeds)) != len(self.seeds),
            "ranks": len(self.ranks) == 0
            or len(set(self.ranks)) != len(self.ranks)
            or any(r is not None and r < 1 for r in self.ranks),
            "sites": self.sites is not None
            and (len(self.sites) == 0 or len(set(self.sites)) != len(self.sites)),
        }
        for name, bad in problems.items():
            if bad:
                raise ProbeConfigError(
                    f"StructuralGrid.{name} is invalid ({self!r}): give distinct seeds, distinct"
                    " ranks >= 1 (or None for full rank) and distinct site indices."
                )

    def layout(self, n_sites: int, dim: int) -> StructuralLayout:
        """The probe axes for features with `n_sites` sites of width `dim`."""
        sites = tuple(range(n_sites)) if self.sites is None else tuple(self.sites)
        bad = [s for s in sites if not 0 <= s < n_sites]
        if bad:
            raise ProbeConfigError(
                f"StructuralGrid.sites: site {bad[0]} is outside the features' {n_sites} sites."
            )
        ranks = tuple(dim if r is None else r for r in self.ranks)
        if any(r > dim for r in ranks) or len(set(ranks)) != len(ranks):
            raise ProbeConfigError(
                f"StructuralGrid.ranks {self.ranks}: ranks must be distinct and at most the"
                f" features' width {dim} (None means {dim})."
            )
        return StructuralLayout(tuple(self.seeds), sites, ranks)


@dataclass(frozen=True)
class StructuralLayout:
    """Probe axes (seed, site, rank), rank fastest; `P = seeds * sites * ranks`."""

    seeds: tuple[int, ...]
    sites: tuple[int, ...]
    ranks: tuple[int, ...]

    @property
    def shape(self) -> tuple[int, int, int]:
        """(seeds, sites, ranks)."""
        return (len(self.seeds), len(self.sites), len(self.ranks))

    @property
    def n_probes(self) -> int:
        """P."""
        s, t, r = self.shape
        return s * t * r

    @property
    def width(self) -> int:
        """Columns of the stored projections: the largest rank."""
        return max(self.ranks)

    def rank_mask(self, device: torch.device) -> Bool[Tensor, "rank width"]:
        """Which columns each rank uses."""
        ranks = torch.tensor(self.ranks, device=device)
        return torch.arange(self.width, device=device)[None, :] < ranks[:, None]

    def frame(self) -> pl.DataFrame:
        """One row per probe: probe, site, seed, rank."""
        rows = [(s, t, r) for s in self.seeds for t in self.sites for r in self.ranks]
        return pl.DataFrame(
            {
                "probe": list(range(len(rows))),
                "site": [t for _, t, _ in rows],
                "seed": [s for s, _, _ in rows],
                "rank": [r for _, _, r in rows],
            },
            schema={"probe": pl.Int64, "site": pl.Int64, "seed": pl.Int64, "rank": pl.Int64},
        )


def initial_projection(
    seed: int, site: int, rank: int, dim: int, width: int, init_range: float
) -> Float[Tensor, "dim width"]:
    """A probe's starting `B`: uniform(-init_range, init_range) in its first `rank` columns,
    drawn from a stream keyed by (seed, site, rank), so a probe starts the same in any grid."""
    gen = keyed_generator("structural-init", seed, site, rank)
    out = torch.zeros(dim, width)
    out[:, :rank] = torch.rand(dim, rank, generator=gen) * (2 * init_range) - init_range
    return out


def order_generator(seed: int) -> torch.Generator:
    """The stream of a seed's per-epoch shuffles of the training sentences."""
    return keyed_generator("structural-order", seed)


def project(
    x: Float[Tensor, "seed_or_one site n dim"], proj: Float[Tensor, "seed site rank dim width"]
) -> Float[Tensor, "seed site rank n width"]:
    """`x @ B` of every probe; `x` per seed, or one block shared by all seeds."""
    s, t, r, d, k = proj.shape
    n = x.shape[2]
    if x.shape[0] == 1:
        w = proj.permute(1, 3, 0, 2, 4).reshape(t, d, s * r * k)
        y = torch.bmm(x[0], w).view(t, n, s, r, k)
        return y.permute(2, 0, 3, 1, 4)
    w = proj.permute(0, 1, 3, 2, 4).reshape(s * t, d, r * k)
    y = torch.bmm(x.reshape(s * t, n, d), w).view(s, t, n, r, k)
    return y.permute(0, 1, 3, 2, 4)


def predict(
    y: Float[Tensor, "*probe n width"],
    slots: Int[Tensor, "seed_or_one n"],
    batch: int,
    length: int,
    kind: StructuralKind,
) -> Float[Tensor, "*probe batch length *pair"]:
    """Squared distances of every word pair, or squared norms, padded to `[batch, length]`.

    `slots[s, i]` is the padded position (sentence * length + word) of projected word i of the
    seed's batch (`batch * length` for filler rows).
    """
    lead = y.shape[:-2]
    n, k = y.shape[-2:]
    if kind == "depth":
        values = (y * y).sum(-1)
        out = values.new_zeros(*lead, batch * length + 1)
        index = slots.view(slots.shape[0], 1, 1, n).expand(*lead, n)
        return out.scatter(-1, index, values)[..., :-1].view(*lead, batch, length)
    padded = y.new_zeros(*lead, batch * length + 1, k)
    index = slots.view(slots.shape[0], 1, 1, n, 1).expand(*lead, n, k)
    grid = padded.scatter(-2, index, y)[..., :-1, :].view(*lead, batch, length, k)
    sq = (grid * grid).sum(-1)
    gram = grid @ grid.transpose(-1, -2)
    return sq[..., :, None] + sq[..., None, :] - 2 * gram


def sentence_losses(
    pred: Float[Tensor, "*probe batch length *pair"],
    gold: Float[Tensor, "seed_or_one batch length *pair"],
    mask: Bool[Tensor, "seed_or_one batch length"],
    lengths: Int[Tensor, "seed_or_one batch"],
    kind: StructuralKind,
) -> Float[Tensor, "*probe batch"]:
    """The paper's L1 loss of every sentence: absolute errors summed, over len^2 (distance) or
    len (depth)."""
    s = gold.shape[0]
    if kind == "depth":
        valid = mask.view(s, 1, 1, *mask.shape[1:]).float()
        err = ((pred - gold.view(s, 1, 1, *gold.shape[1:])).abs() * valid).sum(-1)
        return err / lengths.view(s, 1, 1, -1).float()
    pair = (mask[..., :, None] & mask[..., None, :]).float()
    valid = pair.view(s, 1, 1, *pair.shape[1:])
    err = ((pred - gold.view(s, 1, 1, *gold.shape[1:])).abs() * valid).sum((-1, -2))
    return err / lengths.view(s, 1, 1, -1).float().square()


def loss_gradient(
    x: Float[Tensor, "seed site n dim"],
    proj: Float[Tensor, "seed site rank dim width"],
    slots: Int[Tensor, "seed n"],
    gold: Float[Tensor, "seed batch length *pair"],
    mask: Bool[Tensor, "seed batch length"],
    lengths: Int[Tensor, "seed batch"],
    kind: StructuralKind,
) -> Float[Tensor, "seed site rank dim width"]:
    """The gradient of every probe's batch loss (mean of `sentence_losses` over its sentences),
    written out instead of autograd, so no per-pair intermediate is kept for a backward pass.

    Distance: with `E_ij = sign(pred_ij - gold_ij) / len^2 / sentences` on valid pairs (E is
    symmetric), `dL/dy_i = 4 (sum_j E_ij) y_i - 4 sum_j E_ij y_j`. Depth: `dL/dy_i = 2 e_i y_i`
    with `e_i = sign(pred_i - depth_i) / len / sentences`. Then `dL/dB = x^T dL/dy`.
    """
    s, t, r, d, k = proj.shape
    b, w = mask.shape[1:]
    n = x.shape[2]
    y = project(x, proj)  # [s, t, r, n, k]
    inside = slots < b * w
    at = slots.clamp(max=b * w - 1)
    scale = 1.0 / (lengths.to(y.dtype) * b)  # the mean over the batch's sentences
    if kind == "depth":
        sq = (y * y).sum(-1)
        target = gold.reshape(s, b * w).gather(1, at)
        per_word = (scale.gather(1, at // w) * inside).view(s, 1, 1, n)
        e = (sq - target.view(s, 1, 1, n)).sign_().mul_(per_word)
        dy = y * (2 * e)[..., None]
    else:
        index = slots.view(s, 1, 1, n, 1).expand(s, t, r, n, k)
        grid = y.new_zeros(s, t, r, b * w + 1, k).scatter_(-2, index, y)
        grid = grid[..., :-1, :].reshape(s, t, r, b, w, k)
        sq = (grid * grid).sum(-1)
        diff = grid @ grid.transpose(-1, -2)
        diff.mul_(-2).add_(sq[..., :, None]).add_(sq[..., None, :])
        diff.sub_(gold.view(s, 1, 1, b, w, w))
        pair = mask[..., :, None] & mask[..., None, :]
        weight = pair * (scale / lengths.to(y.dtype))[..., None, None]
        e = diff.sign_().mul_(weight.view(s, 1, 1, b, w, w))
        dgrid = 4 * (e.sum(-1)[..., None] * grid - e @ grid)
        dy = dgrid.view(s, t, r, b * w, k).gather(-2, at.view(s, 1, 1, n, 1).expand(s, t, r, n, k))
        dy = dy * inside.view(s, 1, 1, n, 1)
    xt = x.transpose(2, 3).reshape(s * t, d, n)
    grad = torch.bmm(xt, dy.permute(0, 1, 3, 2, 4).reshape(s * t, n, r * k))
    return grad.view(s, t, d, r, k).permute(0, 1, 3, 2, 4)
