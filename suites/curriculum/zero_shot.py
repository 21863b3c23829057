"""Zero-shot diagnostic: an NLI model (HF sequence classification) on each phenomenon, MCC.

Paper §4 (zero-shot diagnostic test): the model is tested on each evaluation set without further
training; the metric is the Matthews correlation coefficient, as in the GLUE diagnostic set.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl
import torch
from jaxtyping import Float
from torch import Tensor, nn
from tqdm.auto import tqdm

from suites.curriculum.labels import ModelLabels, matthews, model_labels
from suites.errors import TaskError
from suites.tasks import Task

MAX_LENGTH = 512  # BERT-style position limit; longer pairs are truncated (longest first)


def resolve_nli_model(model: Any, tokenizer: Any | None) -> tuple[nn.Module, Any]:
    """Accept an HF model with a tokenizer, or a subject loaded with a classification head."""
    if tokenizer is None and hasattr(model, "model") and hasattr(model, "tokenizer"):
        model, tokenizer = model.model, model.tokenizer
    if tokenizer is None:
        raise TaskError("give the model's tokenizer (or a subject from load_subject(..., head=))")
    if not hasattr(getattr(model, "config", None), "num_labels"):
        raise TaskError(
            f"{type(model).__name__} has no classification head; load it with"
            " load_subject(spec, head='sequence-classification')"
        )
    return model, tokenizer


@torch.no_grad()
def nli_probabilities(
    model: nn.Module,
    tokenizer: Any,
    premises: Sequence[str],
    hypotheses: Sequence[str],
    *,
    batch_size: int = 32,
    progress: bool = True,
) -> Float[Tensor, "item model_class"]:
    """Softmax over the model's classes for each (premise, hypothesis), batched by length."""
    device = next(model.parameters()).device
    limit = min(int(getattr(tokenizer, "model_max_length", MAX_LENGTH) or MAX_LENGTH), MAX_LENGTH)
    order = sorted(range(len(premises)), key=lambda i: len(premises[i]) + len(hypotheses[i]))
    config: Any = model.config
    out = torch.empty(len(premises), int(config.num_labels))
    was_training = model.training
    model.eval()
    starts = range(0, len(order), batch_size)
    for start in tqdm(starts, disable=not progress, desc="zero-shot", unit="batch"):
        rows = order[start : start + batch_size]
        batch = tokenizer(
            [premises[i] for i in rows],
            [hypotheses[i] for i in rows],
            padding=True,
            truncation=True,
            max_length=limit,
            return_tensors="pt",
        ).to(device)
        logits = model(**batch).logits.float()
        out[torch.tensor(rows)] = torch.softmax(logits, dim=-1).cpu()
    model.train(was_training)
    return out


def predict_task(
    model: nn.Module,
    tokenizer: Any,
    task: Task,
    labels: ModelLabels,
    *,
    split: str = "test",
    batch_size: int = 32,
    progress: bool = True,
) -> tuple[Tensor, Tensor]:
    """(predicted task class ids, gold class ids) of one split of `task`."""
    rows = task.split(split)
    probs = nli_probabilities(
        model,
        tokenizer,
        rows["text"].to_list(),
        rows["text_pair"].to_list(),
        batch_size=batch_size,
        progress=progress,
    )
    pred = labels.to_task(probs.argmax(dim=-1), task.labels)
    index = {label: i for i, label in enumerate(task.labels)}
    gold = torch.tensor([index[x] for x in rows["label"].to_list()], dtype=torch.int64)
    return pred, gold


def zero_shot(
    model: Any,
    tasks: Mapping[str, Task] | Sequence[Task],
    *,
    tokenizer: Any | None = None,
    label_order: Sequence[str] | Mapping[int, str] | None = None,
    split: str = "test",
    batch_size: int = 32,
    progress: bool = True,
) -> pl.DataFrame:
    """MCC and accuracy of an NLI model on every phenomenon, without training.

    `model`: an HF sequence-classification model (with `tokenizer=`) or a subject loaded with
    `head="sequence-classification"`. The model's class order comes from `config.id2label`
    names, or from `label_order` (names in class order) when those names are meaningless.
    A 2-way model is skipped on 3-way phenomena (with a warning).
    """
    model, tokenizer = resolve_nli_model(model, tokenizer)
    labels = model_labels(getattr(model.config, "id2label", None), label_order)
    chosen = list(tasks.values()) if isinstance(tasks, Mapping) else list(tasks)
    rows, skipped = [], []
    for task in chosen:
        if not labels.can_predict(task.labels):
            skipped.append(task.phenomenon)
            continue
        pred, gold = predict_task(
            model, tokenizer, task, labels, split=split, batch_size=batch_size, progress=progress
        )
        rows.append(
            {
                "phenomenon": task.phenomenon,
                "label_scheme": task.metadata.get("label_scheme", ""),
                "model_scheme": labels.scheme,
                "n_items": int(gold.numel()),
                "mcc": matthews(pred, gold, len(task.labels)),
                "accuracy": float((pred == gold).double().mean()),
                "majority_accuracy": float(gold.bincount().max() / gold.numel()),
            }
        )
    if skipped:
        warnings.warn(
            f"zero_shot: a {labels.scheme} model cannot predict the 3-way phenomena {skipped};"
            " they are left out",
            stacklevel=2,
        )
    return pl.DataFrame(rows)
