"""`TrainConfig`: the settings of the minibatch AdamW grid trainer (`fit_probes`), defaults from
Holmes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from probes.errors import ProbeConfigError

SELECT_CHOICES = (None, "loss", "accuracy", "macro_f1", "micro_f1", "mcc", "pearson")


@dataclass(frozen=True)
class TrainConfig:
    """How every probe of a grid is trained; the same for all probes.

    `shared_order=True` gives all seeds one minibatch order (and one training subset per mask),
    so seeds differ only in initialisation and dropout. Holmes draws an order per seed (the
    default).

    `threads`: worker threads that share the training blocks and evaluation chunks on the CPU,
    each with one intra-op thread (robust beside other busy processes; see `probes.workers`);
    the caller's torch setting is restored afterwards and results do not depend on it.
    `compute="bfloat16"` runs the training GEMMs in bfloat16 (inputs and a per-step copy of the
    weights; softmax, gradient accumulation, AdamW and evaluation stay float32): faster where
    the CPU has bfloat16 instructions, at slightly different numbers.
    """

    epochs: int = 20  # Holmes (Waldis et al. 2024) App. A.2: 20 epochs
    batch_size: int = 64  # Holmes App. A.2: batch size 64
    lr: float = 5e-4  # Holmes App. A.2: learning rate 0.0005
    dropout: float = 0.2  # Holmes App. A.2: dropout 0.2 (on the probe input)
    warmup: float = 0.1  # Holmes App. A.2: warmup over 10% of the steps
    lr_decay: bool = True  # linear decay to 0 after warmup (transformers' linear schedule)
    weight_decay: float = 0.01  # torch.optim.AdamW default; Holmes App. A.2 names AdamW only
    betas: tuple[float, float] = (0.9, 0.999)  # torch.optim.AdamW default
    eps: float = 1e-8  # torch.optim.AdamW default
    select_by: str | None = None  # Holmes App. A.2: best epoch on dev; None = the head's metric
    shared_order: bool = False  # Holmes App. A.2: seeds [0..4] each with its own order
    order_seed: int = 0  # the one order's seed when shared_order=True
    eval_batch: int = 4096  # items per evaluation chunk (memory, not results)
    threads: int | None = None  # CPU worker threads (None: torch.get_num_threads()); not results
    compute: Literal["float32", "bfloat16"] = "float32"  # dtype of the training GEMMs (opt-in)

    def __post_init__(self) -> None:
        checks = {
            "epochs": self.epochs >= 1,
            "batch_size": self.batch_size >= 1,
            "lr": self.lr > 0,
            "dropout": 0 <= self.dropout < 1,
            "warmup": 0 <= self.warmup <= 1,
            "weight_decay": self.weight_decay >= 0,
            "betas": all(0 <= b < 1 for b in self.betas),
            "eps": self.eps > 0,
            "select_by": self.select_by in SELECT_CHOICES,
            "eval_batch": self.eval_batch >= 1,
            "threads": self.threads is None or self.threads >= 1,
            "compute": self.compute in ("float32", "bfloat16"),
        }
        for name, ok in checks.items():
            if not ok:
                raise ProbeConfigError(
                    f"TrainConfig.{name}={getattr(self, name)!r} is out of range; see the"
                    f" field's comment (select_by is one of {SELECT_CHOICES})."
                )

    def lr_factor(self, step: int, total_steps: int) -> float:
        """The learning-rate multiplier of update `step` (0-based) out of `total_steps`.

        Linear warmup from 0 over `ceil(warmup * total_steps)` updates, then linear decay to 0
        (or constant with `lr_decay=False`), as transformers' `get_linear_schedule_with_warmup`.
        """
        warm = math.ceil(round(self.warmup * total_steps, 6))
        if step < warm:
            return step / warm
        if not self.lr_decay:
            return 1.0
        return max(0.0, (total_steps - step) / max(1, total_steps - warm))
