"""`TrainConfig`: the settings of the minibatch AdamW grid trainer (`fit_probes`), defaults from
Holmes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from probes._grid.field_rules import Rule, check_fields
from probes._grid.memory_budget import MEMORY_NEED, is_memory, memory_bytes
from probes.metric_table import select_choices


@dataclass(frozen=True)
class TrainConfig:
    """How every probe of a grid is trained; the same for all probes.

    `shared_order=True` gives all seeds one minibatch order (and one training subset per mask),
    so seeds differ only in initialisation and dropout. Holmes draws an order per seed (the
    default).

    `threads`: worker threads that share the training blocks and evaluation chunks on the CPU,
    each with one intra-op thread (robust beside other busy processes; see `probes._grid.workers`),
    pinned one per CPU when there are as many as CPUs (`LINGPROBE_PIN_THREADS=0`: never); the
    caller's torch setting is restored afterwards and results do not depend on it.
    `compute="bfloat16"` runs the training GEMMs in bfloat16 (inputs and a per-step copy of the
    weights; softmax, gradient accumulation, AdamW and evaluation stay float32): faster where
    the CPU has bfloat16 instructions, at slightly different numbers.

    `memory` (bytes, or a size such as `"4GiB"`; see `probes._grid.memory_budget`) bounds the
    float32 features held in memory when `fit_probes` reads a `FeatureSet`: it reads a group of
    sites that fits, trains every probe of those sites to the end and reads the next group while
    one trains, each byte once per fit; where one site does not fit, it streams item blocks, one
    read of the training rows per epoch. Results equal the fit of the same features in memory.
    `None` reads every site of the grid at once. A tensor is already in memory: `memory` does
    not change its fit. On a CUDA device the groups are held on the device (read through pinned
    host memory), so `memory` bounds the device memory the features take.
    """

    @property
    def memory_bytes(self) -> int | None:
        """`memory` in bytes (None: no bound)."""
        return memory_bytes(self.memory)

    epochs: int = 20  # Holmes (Waldis et al. 2024) App. A.2: 20 epochs
    batch_size: int = 64  # Holmes App. A.2: batch size 64
    lr: float = 5e-4  # Holmes App. A.2: learning rate 0.0005
    dropout: float = 0.2  # Holmes App. A.2: dropout 0.2 (on the probe input)
    warmup: float = 0.1  # Holmes App. A.2: warmup over 10% of the steps
    lr_decay: bool = True  # linear decay to 0 after warmup (transformers' linear schedule)
    weight_decay: float = 0.01  # torch.optim.AdamW default; Holmes App. A.2 names AdamW only
    betas: tuple[float, float] = (0.9, 0.999)  # torch.optim.AdamW default
    eps: float = 1e-8  # torch.optim.AdamW default
    # Holmes App. A.2: best epoch on dev; None = the head's metric; a metric whose
    # `higher_is_better` is False (loss, mse) is minimised (`probes.metric_table`)
    select_by: str | None = None
    shared_order: bool = False  # Holmes App. A.2: seeds [0..4] each with its own order
    order_seed: int = 0  # the one order's seed when shared_order=True
    eval_batch: int = 4096  # items per evaluation chunk (memory, not results)
    threads: int | None = None  # CPU worker threads (None: torch.get_num_threads()); not results
    compute: Literal["float32", "bfloat16"] = "float32"  # dtype of the training GEMMs (opt-in)
    memory: int | str | None = None  # bound on the features read from a FeatureSet; not results

    def __post_init__(self) -> None:
        check_fields(self, TRAIN_RULES)

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


TRAIN_RULES = {
    "epochs": Rule(lambda v: v >= 1, "an integer >= 1", "epochs=20 (Holmes)"),
    "batch_size": Rule(lambda v: v >= 1, "an integer >= 1", "batch_size=64 (Holmes)"),
    "lr": Rule(lambda v: v > 0, "a finite number > 0", "lr=5e-4 (Holmes)"),
    "dropout": Rule(lambda v: 0 <= v < 1, "a number in [0, 1)", "dropout=0.2 (Holmes)"),
    "warmup": Rule(lambda v: 0 <= v <= 1, "a fraction of the steps in [0, 1]", "warmup=0.1"),
    "lr_decay": Rule(lambda v: True, "True or False", "lr_decay=True"),
    "weight_decay": Rule(lambda v: v >= 0, "a finite number >= 0", "weight_decay=0.01"),
    "betas": Rule(
        lambda v: all(0 <= b < 1 for b in v), "two numbers in [0, 1)", "betas=(0.9, 0.999)"
    ),
    "eps": Rule(lambda v: v > 0, "a finite number > 0", "eps=1e-8"),
    "select_by": Rule(
        lambda v: v in select_choices(),
        f"one of {', '.join(repr(c) for c in select_choices())} (probes.metric_table)",
        "select_by='loss'",
    ),
    "shared_order": Rule(lambda v: True, "True or False", "shared_order=False"),
    "order_seed": Rule(lambda v: v >= 0, "an integer >= 0", "order_seed=0"),
    "eval_batch": Rule(lambda v: v >= 1, "an integer >= 1", "eval_batch=4096"),
    "threads": Rule(lambda v: v is None or v >= 1, "None or an integer >= 1", "threads=2"),
    "compute": Rule(
        lambda v: v in ("float32", "bfloat16"), "'float32' or 'bfloat16'", "compute='float32'"
    ),
    "memory": Rule(is_memory, MEMORY_NEED, "memory='4GiB'"),
}
