"""Plain references: one probe trained the textbook way (autograd, torch.optim, sklearn metrics).

They draw their random numbers from the same keyed streams as `fit_probes` (that is the
protocol), but share none of its batching, gradient, schedule or metric code.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import f1_score
from torch import Tensor

from probes import TrainConfig, control_labels
from probes._grid.streams import keyed_generator, training_order
from probes.mdl import prefix_size


def linear_schedule(warmup: int, total: int):
    """transformers' get_linear_schedule_with_warmup multiplier."""

    def factor(step: int) -> float:
        if step < warmup:
            return step / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))

    return factor


def dropout_keep(rows: int, dim: int, p: float, gen: torch.Generator) -> Tensor:
    """The protocol's keep mask `[rows, dim]`, by integer arithmetic: each 64-bit draw gives four
    16-bit quarters (lowest first), read as signed integers; kept when >= round(p 2^16) - 2^15."""
    n = rows * dim
    words = torch.empty(math.ceil(n / 4), dtype=torch.int64).random_(-(2**63), None, generator=gen)
    unsigned = words.numpy().view(np.uint64)
    quarters = (unsigned[:, None] >> np.arange(0, 64, 16, dtype=np.uint64)) & np.uint64(0xFFFF)
    signed = quarters.astype(np.int64)
    signed[signed >= 2**15] -= 2**16
    return torch.from_numpy(signed.reshape(-1)[:n].reshape(rows, dim) >= round(p * 2**16) - 2**15)


def train_reference_probe(
    x: Tensor,
    labels: Tensor,
    codes: Tensor,
    *,
    seed: int,
    control: bool,
    fraction: float,
    config: TrainConfig,
    type_ids: Tensor | None,
) -> dict:
    """One linear probe on `x [item, dim]`: weights and best epoch (macro-F1 on dev)."""
    dim = x.shape[1]
    k = int(labels.max()) + 1
    y = control_labels(labels, type_ids, seed) if control else labels
    gen = keyed_generator("init", seed)
    bound = 1 / math.sqrt(dim)
    weight = torch.empty(k, dim).uniform_(-bound, bound, generator=gen)
    bias = torch.empty(k).uniform_(-bound, bound, generator=gen)
    w = weight.T.clone().requires_grad_(True)
    b = bias.clone().requires_grad_(True)
    train_items = (codes == 0).nonzero().flatten()
    n = prefix_size(fraction, len(train_items))
    members = training_order(train_items, seed)[:n]
    order_gen = keyed_generator("order", seed, n)
    drop_gen = keyed_generator("dropout", seed, n)
    steps = math.ceil(n / config.batch_size) * config.epochs
    opt = torch.optim.AdamW(
        [w, b], lr=config.lr, betas=config.betas, eps=config.eps, weight_decay=config.weight_decay
    )
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, linear_schedule(math.ceil(config.warmup * steps - 1e-9), steps)
    )
    dev = (codes == 1).nonzero().flatten()
    best, best_epoch, best_params = -np.inf, 0, (w.detach().clone(), b.detach().clone())
    for epoch in range(config.epochs):
        perm = members[torch.randperm(n, generator=order_gen)]
        for start in range(0, n, config.batch_size):
            rows = perm[start : start + config.batch_size]
            keep = dropout_keep(len(rows), dim, config.dropout, drop_gen)
            xb = x[rows] * keep / (1 - round(config.dropout * 2**16) / 2**16)
            loss = F.cross_entropy(xb @ w + b, y[rows])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        with torch.no_grad():
            pred = (x[dev] @ w + b).argmax(-1)
        score = f1_score(y[dev].numpy(), pred.numpy(), average="macro")
        if score > best:
            best, best_epoch = score, epoch + 1
            best_params = (w.detach().clone(), b.detach().clone())
    return {"coef": best_params[0], "intercept": best_params[1], "best_epoch": best_epoch, "y": y}
