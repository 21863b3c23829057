"""From an NLI model's output classes to a phenomenon's labels, and the MCC of predictions.

A model's classes are named by `config.id2label`; names such as ENTAILMENT / neutral /
"contradiction" are recognised, meaningless ones (LABEL_0, ...) need an explicit order.
3-way predictions on a 2-way phenomenon collapse as entailment -> entailed, neutral and
contradiction -> not-entailed (the argmax class is mapped; HANS-style, McCoy et al. 2019).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch
from jaxtyping import Float, Int
from torch import Tensor

from lingprobe.errors import LingprobeError
from probes import confusion_matrices, mcc
from suites.readers.curriculum_nli import THREE_WAY, TWO_WAY

ENTAILMENT, NEUTRAL, CONTRADICTION = THREE_WAY
ENTAILED, NOT_ENTAILED = TWO_WAY
# Spellings of NLI class names found in model configs, normalised to the benchmark's names.
SYNONYMS = {
    "entailment": ENTAILMENT,
    "entail": ENTAILMENT,
    "entails": ENTAILMENT,
    "neutral": NEUTRAL,
    "contradiction": CONTRADICTION,
    "contradict": CONTRADICTION,
    "contradicts": CONTRADICTION,
    "entailed": ENTAILED,
    "not-entailed": NOT_ENTAILED,
    "not-entailment": NOT_ENTAILED,
    "non-entailment": NOT_ENTAILED,
    "non-entailed": NOT_ENTAILED,
}
COLLAPSE = {ENTAILMENT: ENTAILED, NEUTRAL: NOT_ENTAILED, CONTRADICTION: NOT_ENTAILED}


class LabelMappingError(LingprobeError, ValueError):
    """A model's classes cannot be matched to a phenomenon's labels."""


def canonical_label(name: str) -> str | None:
    """The benchmark name of a model class name (`ENTAILMENT` -> `entailment`), or None."""
    return SYNONYMS.get(name.strip().lower().replace("_", "-").replace(" ", "-"))


@dataclass(frozen=True)
class ModelLabels:
    """The benchmark label of each of a model's output classes, in the model's order."""

    names: tuple[str, ...]

    def __post_init__(self) -> None:
        if set(self.names) not in (set(THREE_WAY), set(TWO_WAY)) or len(set(self.names)) != len(
            self.names
        ):
            raise LabelMappingError(
                f"model classes {list(self.names)} must be a permutation of {list(THREE_WAY)} or"
                f" of {list(TWO_WAY)}; give the model's label order explicitly"
            )

    @property
    def scheme(self) -> str:
        """`3-way` or `2-way`."""
        return "3-way" if len(self.names) == 3 else "2-way"

    def can_predict(self, task_labels: Sequence[str]) -> bool:
        """Whether predictions can be expressed in `task_labels` (3-way covers 2-way)."""
        return set(task_labels) <= set(self.names) or (
            self.scheme == "3-way" and set(task_labels) <= set(TWO_WAY)
        )

    def to_task(
        self, model_class: Int[Tensor, " item"], task_labels: Sequence[str]
    ) -> Int[Tensor, " item"]:
        """Task class ids of predicted model classes (3-way collapses for a 2-way task)."""
        if not self.can_predict(task_labels):
            raise LabelMappingError(
                f"a {self.scheme} model ({list(self.names)}) cannot predict labels"
                f" {list(task_labels)}; use a 3-way NLI model for 3-way phenomena"
            )
        index = {label: i for i, label in enumerate(task_labels)}
        two_way = set(task_labels) <= set(TWO_WAY)
        table = [index[COLLAPSE.get(n, n) if two_way else n] for n in self.names]
        return torch.tensor(table, dtype=torch.int64)[model_class]

    def task_probabilities(
        self, probs: Float[Tensor, "item model_class"], task_labels: Sequence[str]
    ) -> Float[Tensor, "item class"]:
        """Probabilities over `task_labels`: permuted, or summed into entailed / not-entailed."""
        columns = self.to_task(torch.arange(len(self.names)), task_labels).to(probs.device)
        out = torch.zeros(probs.shape[0], len(task_labels), dtype=probs.dtype, device=probs.device)
        return out.index_add(1, columns, probs)


def model_labels(
    id2label: Mapping[int, str] | None, order: Sequence[str] | Mapping[int, str] | None = None
) -> ModelLabels:
    """The model's class order: `order` when given (names in class order, or index -> name),
    else from `id2label` names; `LabelMappingError` when the names carry no NLI meaning."""
    if order is not None:
        names = [order[i] for i in sorted(order)] if isinstance(order, Mapping) else list(order)
        resolved = [canonical_label(n) for n in names]
        if None in resolved:
            raise LabelMappingError(
                f"label order {names}: {names[resolved.index(None)]!r} is not an NLI label; use"
                f" names from {list(THREE_WAY)} or {list(TWO_WAY)}"
            )
        return _model_labels([r for r in resolved if r is not None])
    found = {int(i): canonical_label(str(n)) for i, n in (id2label or {}).items()}
    if not found or None in found.values():
        raise LabelMappingError(
            f"the model's id2label {dict(id2label or {})} does not name NLI classes; pass the"
            " model's label order explicitly, e.g. ('entailment', 'neutral', 'contradiction')"
        )
    return _model_labels([found[i] for i in sorted(found)])  # type: ignore[misc]


def _model_labels(names: list[str]) -> ModelLabels:
    """`ModelLabels`, reading `entailment` as `entailed` next to `not-entailed` (RTE style)."""
    if NOT_ENTAILED in names:
        names = [ENTAILED if n == ENTAILMENT else n for n in names]
    return ModelLabels(tuple(names))


def matthews(pred: Int[Tensor, " item"], true: Int[Tensor, " item"], num_classes: int) -> float:
    """Matthews correlation (multiclass, equal to sklearn's `matthews_corrcoef`)."""
    conf = confusion_matrices(pred[None], true[None], num_classes)
    return float(mcc(conf)[0])
