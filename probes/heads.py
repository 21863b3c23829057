"""Output heads: loss gradient, prediction and metrics for classification, multi-label, regression.

Training tensors are feature-major, `[mask, seed, site, variant, out, batch]`; targets, encoded
once per epoch by `encode`, come as `[mask, seed, 1, variant, out, batch]` and loss weights as
`[mask, stream, 1, 1, 1, batch]` (1 / the batch's real size, 0 for padding), so every probe's
loss is its batch mean.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable

import torch
from jaxtyping import Bool, Float, Shaped
from torch import Tensor

from probes import metrics
from probes._grid.inputs import TargetKind
from probes.metric_table import metric_names


class Head(ABC):
    """What a probe's outputs mean; `outputs` is the width of its last layer."""

    kind: TargetKind
    primary: str  # the metric dev selection uses by default

    def __init__(self, outputs: int) -> None:
        self.outputs = outputs

    @property
    def metric_names(self) -> tuple[str, ...]:
        """The head's metrics: the item-sum metrics of its kind in `probes.metric_table`."""
        return metric_names("item_sums", self.kind)

    @abstractmethod
    def encode(self, targets: Tensor) -> Tensor:
        """Targets `[..., *label]` as training tensors `[..., out]` (one-hot for classes)."""

    @abstractmethod
    def grad(self, logits: Tensor, encoded: Tensor, weight: Tensor) -> Tensor:
        """d(batch-mean loss)/d(logits) in the training layout (outputs on axis -2)."""

    @abstractmethod
    def predict(self, logits: Float[Tensor, "*rest out"]) -> Shaped[Tensor, "..."]:
        """Predictions from outputs (last axis): class ids, 0/1 label rows, or values."""

    @abstractmethod
    def item_loss(
        self, logits: Float[Tensor, "*rest out"], targets: Tensor
    ) -> Float[Tensor, "*rest"]:
        """Per-row training loss (nats); `targets` are `[*rest]` ids/values or `[*rest, out]`."""

    @abstractmethod
    def metrics(
        self,
        pred: Shaped[Tensor, " probe item *o"],
        targets: Shaped[Tensor, " probe item *o"],
        include: Bool[Tensor, "probe item"] | None,
    ) -> dict[str, Float[Tensor, " probe"]]:
        """Every metric of the head, per probe, over the included items."""


class ClassificationHead(Head):
    """Softmax cross-entropy over K classes; macro-F1 selects (Holmes §3)."""

    kind = "classification"
    primary = "macro_f1"

    def encode(self, targets: Tensor) -> Tensor:
        return torch.nn.functional.one_hot(targets, self.outputs).float()

    def grad(self, logits: Tensor, encoded: Tensor, weight: Tensor) -> Tensor:
        return torch.softmax(logits, dim=-2).sub_(encoded).mul_(weight)

    def predict(self, logits: Float[Tensor, "*rest out"]) -> Shaped[Tensor, "..."]:
        # max's indices, the same as argmax (first maximum; NaN counts as the maximum) and
        # faster on the CPU (benchmarks/HISTORY.md)
        return logits.max(dim=-1).indices

    def item_loss(
        self, logits: Float[Tensor, "*rest out"], targets: Tensor
    ) -> Float[Tensor, "*rest"]:
        logp = torch.log_softmax(logits, dim=-1)
        return -logp.gather(-1, targets[..., None]).squeeze(-1)

    def item_bits(
        self, logits: Float[Tensor, "*rest out"], targets: Tensor
    ) -> Float[Tensor, "*rest"]:
        """-log2 p(true class): the MDL code of each item."""
        return self.item_loss(logits, targets) / math.log(2)

    def metrics(
        self,
        pred: Shaped[Tensor, " probe item *o"],
        targets: Shaped[Tensor, " probe item *o"],
        include: Bool[Tensor, "probe item"] | None,
    ) -> dict[str, Float[Tensor, " probe"]]:
        return metrics.classification_metrics(pred, targets, self.outputs, include)


class MultiLabelHead(Head):
    """Independent sigmoids with binary cross-entropy (mean over labels); micro-F1 selects."""

    kind = "multilabel"
    primary = "micro_f1"

    def encode(self, targets: Tensor) -> Tensor:
        return targets.float()

    def grad(self, logits: Tensor, encoded: Tensor, weight: Tensor) -> Tensor:
        return torch.sigmoid(logits).sub_(encoded).mul_(weight / self.outputs)

    def predict(self, logits: Float[Tensor, "*rest out"]) -> Shaped[Tensor, "..."]:
        return logits > 0

    def item_loss(
        self, logits: Float[Tensor, "*rest out"], targets: Tensor
    ) -> Float[Tensor, "*rest"]:
        bce = torch.nn.functional.binary_cross_entropy_with_logits
        return bce(logits, targets.float(), reduction="none").mean(dim=-1)

    def metrics(
        self,
        pred: Shaped[Tensor, " probe item *o"],
        targets: Shaped[Tensor, " probe item *o"],
        include: Bool[Tensor, "probe item"] | None,
    ) -> dict[str, Float[Tensor, " probe"]]:
        return metrics.multilabel_metrics(pred, targets > 0.5, include)


class RegressionHead(Head):
    """One output with squared error; Pearson's r selects (Holmes §3)."""

    kind = "regression"
    primary = "pearson"

    def encode(self, targets: Tensor) -> Tensor:
        return targets.float()[..., None]

    def grad(self, logits: Tensor, encoded: Tensor, weight: Tensor) -> Tensor:
        return (logits - encoded).mul_(2 * weight)

    def predict(self, logits: Float[Tensor, "*rest out"]) -> Shaped[Tensor, "..."]:
        return logits[..., 0]

    def item_loss(
        self, logits: Float[Tensor, "*rest out"], targets: Tensor
    ) -> Float[Tensor, "*rest"]:
        return (logits[..., 0] - targets) ** 2

    def metrics(
        self,
        pred: Shaped[Tensor, " probe item *o"],
        targets: Shaped[Tensor, " probe item *o"],
        include: Bool[Tensor, "probe item"] | None,
    ) -> dict[str, Float[Tensor, " probe"]]:
        return metrics.regression_metrics(pred, targets, include)


def make_head(kind: str, outputs: int) -> Head:
    """The head of a target kind ("classification", "multilabel", "regression")."""
    kinds: dict[str, Callable[[int], Head]] = {
        "classification": ClassificationHead,
        "multilabel": MultiLabelHead,
        "regression": RegressionHead,
    }
    return kinds[kind](outputs)
