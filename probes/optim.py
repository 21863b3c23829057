"""AdamW over the masks of a grid: one step count and learning rate per mask.

Masks run different numbers of steps, so each mask's slice of every parameter is its own
AdamW problem; all of them share torch's functional (fused where supported) AdamW kernel, which
is elementwise, so a probe's update is the same whatever else is in the batch.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.optim.adamw import adamw

from probes.config import TrainConfig


class MaskedAdamW:
    """AdamW state for `params` (training-layout tensors whose first axis is the mask)."""

    def __init__(
        self,
        params: list[Tensor],
        grads: list[Tensor],
        steps_per_epoch: list[int],
        config: TrainConfig,
    ) -> None:
        self.config = config
        self.params, self.grads = params, grads
        self.exp_avg = [torch.zeros_like(p) for p in params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in params]
        device = params[0].device
        self.fused = True if device.type in ("cpu", "cuda") else None
        n_masks = params[0].shape[0]
        self.state_steps = [
            [torch.zeros((), dtype=torch.float32, device=device) for _ in params]
            for _ in range(n_masks)
        ]
        self.total = [config.epochs * s for s in steps_per_epoch]
        self.taken = [0] * n_masks

    def step(self, active: int) -> None:
        """One update of the first `active` masks (their gradients are in `grads`)."""
        c = self.config
        for m in range(active):
            lr = c.lr * c.lr_factor(self.taken[m], self.total[m])
            adamw(
                [p[m] for p in self.params],
                [g[m] for g in self.grads],
                [e[m] for e in self.exp_avg],
                [e[m] for e in self.exp_avg_sq],
                [],
                self.state_steps[m],
                fused=self.fused,
                amsgrad=False,
                beta1=c.betas[0],
                beta2=c.betas[1],
                lr=lr,
                weight_decay=c.weight_decay,
                eps=c.eps,
                maximize=False,
            )
            self.taken[m] += 1
