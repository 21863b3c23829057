"""AdamW over the blocks of a grid: one (mask, units) slice of every parameter at a time.

Masks run different numbers of steps, so each mask's slice is its own AdamW problem with its own
step count and learning rate; each block keeps its own step counter, so blocks can be updated by
different worker threads. All share torch's functional (fused where supported)
AdamW kernel, which is elementwise, so a probe's update is the same whatever else is in the grid.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.optim.adamw import adamw

from probes._grid.blocks import Block
from probes.batched_probes import BatchedProbes
from probes.config import TrainConfig


class MaskedAdamW:
    """AdamW state for `params` (training-layout tensors `[mask, site, ...]`)."""

    def __init__(
        self,
        params: list[Tensor],
        grads: list[Tensor],
        steps_per_epoch: list[int],
        config: TrainConfig,
        blocks: list[Block],
    ) -> None:
        self.config = config
        self.params, self.grads = params, grads
        self.exp_avg = [torch.zeros_like(p) for p in params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in params]
        device = params[0].device
        self.fused = True if device.type in ("cpu", "cuda") else None
        self.state_steps = {
            _key(block): [torch.zeros((), device=device) for _ in params] for block in blocks
        }
        self.total = [config.epochs * s for s in steps_per_epoch]

    def lr(self, mask: int, taken: int) -> float:
        """The learning rate of a mask's update number `taken` (warm-up and decay included)."""
        return self.config.lr * self.config.lr_factor(taken, self.total[mask])

    def moments(self, block: Block) -> tuple[list[Tensor], list[Tensor], list[Tensor]]:
        """A block's first and second moments and its step counters, for a caller that runs
        torch's fused AdamW kernel itself (`probes._grid.fused_steps`); the moments are shaped as
        `BatchedProbes.fused` shapes the parameters (CUDA's kernel wants equal shapes)."""
        return (
            [BatchedProbes.fused(e, block) for e in self.exp_avg],
            [BatchedProbes.fused(e, block) for e in self.exp_avg_sq],
            self.state_steps[_key(block)],
        )

    def step(self, block: Block, taken: int) -> None:
        """Update a block (mask, units) from its gradients in `grads`; `taken`: the mask's
        updates so far (its place in the learning-rate schedule)."""
        c, units = self.config, BatchedProbes.units
        adamw(
            [units(p, block) for p in self.params],
            [units(g, block) for g in self.grads],
            [units(e, block) for e in self.exp_avg],
            [units(e, block) for e in self.exp_avg_sq],
            [],
            self.state_steps[_key(block)],
            fused=self.fused,
            amsgrad=False,
            beta1=c.betas[0],
            beta2=c.betas[1],
            lr=self.lr(block[0], taken),
            weight_decay=c.weight_decay,
            eps=c.eps,
            maximize=False,
        )


def _key(block: Block) -> tuple[int, int]:
    m, units = block
    return (m, units.start or 0)
