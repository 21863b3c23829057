"""A chunk of linear-probe training steps as one TorchScript call (`probes._grid.torchscript`).

The grid trainer's step is some fifteen small torch operations (gather the batch rows, dropout,
two batched GEMMs, the head's gradient, fused AdamW). Called from Python, every one of them
retakes the interpreter lock; with two worker threads the lock changed hands at each operation,
and a two-thread fit of the demo's 42-probe grid was hardly faster than one thread (2.7 s
against 3.3 s). As one TorchScript call per chunk of `STEP_CHUNK` steps the two workers run in
parallel (the same fit: 1.7 s), and the probes are bit for bit those of the Python loop
(`tests/probes/test_fused_steps.py`).
"""

from __future__ import annotations

from typing import Any

from torch import Tensor

from probes._grid.block_inputs import ROWS_IN_PLACE, SEEDS_OUTER
from probes._grid.blocks import Block
from probes._grid.optim import MaskedAdamW
from probes._grid.torchscript import compiled
from probes.batched_probes import BatchedProbes
from probes.config import TrainConfig
from probes.heads import Head
from probes.linear import LinearProbes

HEAD_CODES: dict[str, int] = {"classification": 0, "multilabel": 1, "regression": 2}

# TorchScript source (not Python: compiled by torch.jit). Per step, exactly the operations of
# `_Sweep._steps` + `LinearProbes.forward/backward` + the head's `grad` + torch's fused AdamW
# (`torch.optim.adamw` with fused=True: the step counters + 1, then `_fused_adamw_`). `flat` is
# the features as `[item, site * dim]` at the sites the block gathers, `rows` the row streams it
# reads, `layout` how `inputs` holds them (`block_inputs.py`, its codes written into the source):
# SEEDS_OUTER (per-seed order) its seeds' rows over every site, `inputs` `[seed, site, batch, dim]`
# and `keep` `[seed, step, 1, batch, dim]`; ROWS_IN_PLACE the same for one seed, `inputs`
# `[1, batch, site, dim]`; SITES_OUTER the one stream's rows at its sites, `inputs`
# `[site, seed, batch, dim]`; its units start at `offset`. `targets`
# and `weight` are the block's units' for the chunk's rows: for classification class ids
# `[unit, variant, row]` (no one-hot copy of every epoch's rows); other heads get the encoded
# `[unit, variant, out, row]`.
SOURCE = f"""
def linear_chunk(
    flat: Tensor, rows: Tensor, keep: Tensor, inputs: Tensor, layout: int,
    coef: Tensor, intercept: Tensor, grad_coef: Tensor, grad_intercept: Tensor,
    targets: Tensor, weight: Tensor,
    exp_avg: List[Tensor], exp_avg_sq: List[Tensor], state_steps: List[Tensor],
    first: int, lrs: List[float], offset: int, n_var: int, head: int, outputs: int,
    beta1: float, beta2: float, weight_decay: float, eps: float,
):
    n_streams, b, dim = rows.shape[0], keep.shape[-2], keep.shape[-1]
    n_units = coef.shape[0]
    if layout == {ROWS_IN_PLACE}:  # one seed's rows gathered into `inputs` [1, batch, site, dim]
        x = inputs[0].transpose(0, 1).narrow(0, offset, n_units)
    else:
        x = inputs.flatten(0, 1).narrow(0, offset, n_units)
    # what every step reuses: views, and the -1 added at each row's class
    xt, bias, w_all = x.transpose(1, 2), intercept.unsqueeze(-1), weight.unsqueeze(1).unsqueeze(1)
    low = x.dtype != coef.dtype
    index_all = targets.unsqueeze(2)
    minus = torch.full([n_units, n_var, 1, b], -1.0, dtype=coef.dtype, device=coef.device)
    # both parameters' step counters hold the same count: one counter stepped, read twice (a
    # `_foreach_add_` on two scalars cost 12 us a step), the other set equal at the end
    step = state_steps[0]
    counters = [step, step]
    for i in range(len(lrs)):
        lo = (first + i) * b
        at = rows[:, lo:lo + b].reshape(-1)
        # the rows of the streams at the gathered sites, dropout as they land in `inputs`
        if layout == {ROWS_IN_PLACE}:
            torch.index_select(flat, 0, at, out=inputs.view(b, -1))
            inputs[0].mul_(keep[0, i].transpose(0, 1))
        else:
            gathered = flat.index_select(0, at).view(n_streams, b, -1, dim)
            if layout == {SEEDS_OUTER}:
                torch.mul(gathered.permute(0, 2, 1, 3), keep[:, i], out=inputs)
            else:
                torch.mul(gathered.permute(2, 0, 1, 3), keep[:, i], out=inputs)
        if low:
            logits = torch.bmm(coef.to(x.dtype), xt).float().add_(bias)
        else:
            logits = torch.bmm(coef, xt).add_(bias)
        shaped = logits.view(n_units, n_var, logits.shape[1] // n_var, b)
        mine = i * b
        w = w_all.narrow(3, mine, b)
        if head == 0:  # targets: class ids; p - one_hot as p + (-1) at the class, the same floats
            index = index_all.narrow(3, mine, b)
            grad = torch.softmax(shaped, dim=-2).scatter_add_(2, index, minus).mul_(w)
        else:
            encoded = targets[:, :, :, mine:mine + b]
            if head == 1:
                grad = torch.sigmoid(shaped).sub_(encoded).mul_(w / outputs)
            else:
                grad = (shaped - encoded).mul_(2 * w)
        dlogits = grad.view(logits.shape)
        if low:
            grad_coef.copy_(torch.bmm(dlogits.to(x.dtype), x))
        else:
            torch.bmm(dlogits, x, out=grad_coef)
        torch.sum(dlogits, dim=2, out=grad_intercept)
        step.add_(1)
        torch._fused_adamw_(
            [coef, intercept], [grad_coef, grad_intercept], exp_avg, exp_avg_sq, [],
            counters, lr=lrs[i], beta1=beta1, beta2=beta2, weight_decay=weight_decay,
            eps=eps, amsgrad=False, maximize=False,
        )
    for other in state_steps[1:]:
        other.copy_(step)
"""


def linear_chunk() -> Any:
    """The compiled `linear_chunk(...)` (see SOURCE), or None where TorchScript is unavailable."""
    unit = compiled(SOURCE)
    return None if unit is None else unit.linear_chunk


class FusedChunk:
    """A grid's chunks of steps as TorchScript calls (linear probes under fused AdamW)."""

    def __init__(
        self, run: Any, probes: BatchedProbes, opt: MaskedAdamW, config: TrainConfig, head: Head
    ) -> None:
        self.run, self.probes, self.opt, self.config, self.head = run, probes, opt, config, head

    @classmethod
    def for_grid(
        cls, probes: BatchedProbes, opt: MaskedAdamW, config: TrainConfig, head: Head
    ) -> FusedChunk | None:
        """The fused chunk for this grid, or None where the Python loop must run (MLP probes,
        a device without fused AdamW, no TorchScript)."""
        if not (isinstance(probes, LinearProbes) and opt.fused):
            return None
        run = linear_chunk()
        return None if run is None else cls(run, probes, opt, config, head)

    @property
    def class_ids(self) -> bool:
        """Whether the targets stay class ids (classification) instead of the head's encoding."""
        return self.head.kind == "classification"

    def __call__(
        self,
        block: Block,
        inputs: tuple[Tensor, Tensor, Tensor, Tensor, int],
        targets: Tensor,
        weight: Tensor,
        steps: range,
        taken: int,
        offset: int,
    ) -> None:
        """Steps `steps` of a block. inputs: (features `[item, site * dim]` at the sites it
        gathers, the row streams it reads, their keep masks, its input buffer, whose units start
        at `offset`, and how it holds them; see SOURCE); targets and weight:
        the block's units' for these steps' rows; taken: the mask's updates before this epoch."""
        probes, opt, c = self.probes, self.opt, self.config
        exp_avg, exp_avg_sq, counters = opt.moments(block)
        self.run(
            *inputs,
            *(probes.fused(probes.params[n], block) for n in ("coef", "intercept")),
            *(probes.fused(probes.grads[n], block) for n in ("coef", "intercept")),
            *(targets, weight, exp_avg, exp_avg_sq, counters, steps.start),
            [opt.lr(block[0], taken + step) for step in steps],
            *(offset, probes.layout.shape[3]),
            *(HEAD_CODES[self.head.kind], self.head.outputs),
            *(c.betas[0], c.betas[1], c.weight_decay, c.eps),
        )
