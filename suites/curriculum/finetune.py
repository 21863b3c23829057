"""Inoculation by full fine-tuning (paper §4): AdamW over an HF sequence-classification model.

The model's own classification head is trained through its label mapping: the loss is the
negative log-likelihood of the gold label under the model's class probabilities mapped to the
phenomenon's labels (for a 3-way head on a 2-way phenomenon, p(not-entailed) = p(neutral) +
p(contradiction)); predictions are scored as in the zero-shot test. The model is restored to
its original weights after every run. No dev-based checkpoint choice: the last step is scored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product
from typing import Any

import polars as pl
import torch
from torch import nn
from tqdm.auto import tqdm

from internals import seeded_global_rng
from probes import TRAIN
from suites.curriculum.config import CurriculumConfig
from suites.curriculum.labels import ModelLabels, matthews
from suites.curriculum.sampling import base_codes, per_label_subsample
from suites.curriculum.zero_shot import predict_task
from suites.errors import TaskError
from suites.tasks import Task


@dataclass(frozen=True)
class FineTuneConfig:
    """Fine-tuning settings; defaults from the paper's appendix D where it gives them."""

    lr: float = 1e-5  # paper App. D: learning rate 1e-5
    batch_size: int = 8  # paper App. D: batch size 8
    epochs: int = 3  # paper App. D: 3 (and 5) epochs
    warmup_steps: int = 1000  # paper App. D: 1000 warmup updates ...
    warmup_cap: float = 0.1  # ... at most this fraction of all updates (our choice: tiny sets)
    weight_decay: float = 0.01  # torch.optim.AdamW default (paper App. D names AdamW only)
    max_length: int = 256  # our choice: truncation of a tokenized pair

    def warmup(self, total_steps: int) -> int:
        """Warmup updates for a run of `total_steps` updates."""
        return min(self.warmup_steps, math.ceil(self.warmup_cap * total_steps))


def _batch_loss(
    model: nn.Module,
    tokenizer: Any,
    rows: list[tuple[str, str, int]],
    labels: ModelLabels,
    task_labels: tuple[str, ...],
    max_length: int,
) -> torch.Tensor:
    device = next(model.parameters()).device
    batch = tokenizer(
        [r[0] for r in rows],
        [r[1] for r in rows],
        padding=True,
        truncation=True,
        max_length=max_length,
        return_tensors="pt",
    ).to(device)
    probs = torch.softmax(model(**batch).logits.float(), dim=-1)
    task_probs = labels.task_probabilities(probs, task_labels)
    gold = torch.tensor([r[2] for r in rows], device=device)
    return -torch.log(task_probs.gather(1, gold[:, None]).clamp_min(1e-12)).mean()


def fine_tune(
    model: nn.Module,
    tokenizer: Any,
    task: Task,
    labels: ModelLabels,
    *,
    train_rows: torch.Tensor | None = None,
    config: FineTuneConfig | None = None,
    seed: int = 0,
    progress: bool = True,
) -> list[float]:
    """Train `model` in place on the task's train items (or `train_rows`); the step losses."""
    config = config or FineTuneConfig()
    rows_index = (
        train_rows if train_rows is not None else (task.splits == TRAIN).nonzero().flatten()
    )
    frame = task.frame
    index = {label: i for i, label in enumerate(task.labels)}
    data = [
        (frame["text"][i], frame["text_pair"][i], index[frame["label"][i]])
        for i in rows_index.tolist()
    ]
    if not data:
        raise TaskError(f"{task.name}: no training items to fine-tune on")
    steps_per_epoch = math.ceil(len(data) / config.batch_size)
    total = steps_per_epoch * config.epochs
    warm = config.warmup(total)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.lr, weight_decay=config.weight_decay
    )
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: s / warm if s < warm else max(0.0, (total - s) / max(1, total - warm))
    )
    gen = torch.Generator().manual_seed(seed)
    model.train()
    losses = []
    bar = tqdm(total=total, disable=not progress, desc=f"fine-tune {task.phenomenon}", unit="step")
    # The model's dropout draws from torch's global generator: seed it inside a fork, so the
    # caller's random state is neither read nor changed.
    with seeded_global_rng(seed, model):
        for _ in range(config.epochs):
            order = torch.randperm(len(data), generator=gen).tolist()
            for start in range(0, len(order), config.batch_size):
                batch = [data[i] for i in order[start : start + config.batch_size]]
                loss = _batch_loss(model, tokenizer, batch, labels, task.labels, config.max_length)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                schedule.step()
                losses.append(float(loss.detach()))
                bar.update(1)
    bar.close()
    model.eval()
    return losses


def finetune_inoculation(
    model: nn.Module,
    tokenizer: Any,
    task: Task,
    labels: ModelLabels,
    config: CurriculumConfig | None = None,
    finetune: FineTuneConfig | None = None,
    *,
    progress: bool = True,
) -> pl.DataFrame:
    """Inoculation curves by fine-tuning: for each (N per label, seed), fine-tune a fresh copy of
    the weights on that subsample and score `val`. Columns as `inoculation` (input `finetune`,
    split `test`, metrics accuracy and mcc)."""
    config = config or CurriculumConfig()
    initial = {k: v.detach().clone() for k, v in model.state_dict().items()}
    base = base_codes(task, config.dev_fraction, config.split_seed)
    rows = []
    try:
        for size, seed in product(config.sizes, config.seeds):
            codes = per_label_subsample(base, task.targets, size, seed)
            model.load_state_dict(initial)
            fine_tune(
                model,
                tokenizer,
                task,
                labels,
                train_rows=(codes == TRAIN).nonzero().flatten(),
                config=finetune,
                seed=seed,
                progress=progress,
            )
            pred, gold = predict_task(model, tokenizer, task, labels, progress=False)
            scores = {
                "accuracy": float((pred == gold).double().mean()),
                "mcc": matthews(pred, gold, len(task.labels)),
            }
            rows += [
                {
                    "phenomenon": task.phenomenon,
                    "input": "finetune",
                    "n_per_label": size,
                    "n_train": int((codes == TRAIN).sum()),
                    "seed": seed,
                    "split": "test",
                    "metric": metric,
                    "value": value,
                }
                for metric, value in scores.items()
            ]
    finally:
        model.load_state_dict(initial)
    return pl.DataFrame(rows)
