"""The metric table: one record per metric lingprobe reports, read by every consumer.

A record says how the metric is computed, which targets it scores, whether higher is better and
how it is labelled. The heads (`probes.heads`), dev selection (`probes.evaluate`, which
minimises a metric whose `higher_is_better` is False), `TrainConfig.select_by`, the bootstrap
and paired tests (`probes.item_sums`), the rank and structural metrics, and the suites' plots,
explorer and leaderboards read it; nothing else lists metric names. The order of `METRICS` is
the order of preference when a report leads with one metric of a task.

How a metric is computed (`computed`):

* `"item_sums"`: a function of sums over the items of per-item features (`from_sums`, one
  formula per target kind over that kind's sums: `ClassCounts`, `LabelCounts` or `Moments`).
  The head's metrics, dev selection and every bootstrap resample and leave-one-out value apply
  the same formula to their own sums, so one entry here is the whole metric.
* `"loss"`: the head's training loss, averaged over the items; a dev-selection criterion, not a
  reported row.
* `"ranks"`: a rank statistic of the test class scores (`probes.rank_metrics`; resampled by
  weighting the sorted items, `probes.rank_bootstrap`). Not a sum over items: its weighted and
  leave-one-out forms live in `probes.rank_metrics`, keyed by the name here. Test split of
  classification probes only.
* `"sentences"`: a structural probe's statistic over sentences (`probes.structural._metrics`,
  keyed by the name here).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import torch
from jaxtyping import Float
from torch import Tensor

from probes.errors import ProbeConfigError

MetricTarget = Literal["classification", "multilabel", "regression", "distance", "depth"]
Computed = Literal["item_sums", "loss", "ranks", "sentences"]
HEADS: tuple[MetricTarget, ...] = ("classification", "multilabel", "regression")


@dataclass(frozen=True)
class ClassCounts:
    """Single-label classes: per-class true positives and true / predicted totals."""

    tp: Float[Tensor, "*batch class"]
    true: Float[Tensor, "*batch class"]
    pred: Float[Tensor, "*batch class"]


@dataclass(frozen=True)
class LabelCounts:
    """Label rows: per-label tp, fp, fn, the exact-match count and the number of items."""

    tp: Float[Tensor, "*batch label"]
    fp: Float[Tensor, "*batch label"]
    fn: Float[Tensor, "*batch label"]
    exact: Float[Tensor, "*batch"]
    n: Float[Tensor, "*batch"]


@dataclass(frozen=True)
class Moments:
    """Values: item count, sums of the (roughly centred) prediction x and target y, of their
    squares and product, and the sum of squared errors."""

    n: Float[Tensor, "*batch"]
    sx: Float[Tensor, "*batch"]
    sy: Float[Tensor, "*batch"]
    sxx: Float[Tensor, "*batch"]
    syy: Float[Tensor, "*batch"]
    sxy: Float[Tensor, "*batch"]
    se: Float[Tensor, "*batch"]


@dataclass(frozen=True)
class Metric:
    """One metric: `name` (the `metric` column's value), `label` (words on plots and pages),
    `higher_is_better`, how it is `computed`, the `targets` it scores and, for item-sum metrics,
    `from_sums`: its formula for each target kind."""

    name: str
    label: str
    higher_is_better: bool
    computed: Computed
    targets: tuple[MetricTarget, ...]
    from_sums: Mapping[str, Callable[[Any], Tensor]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        bad = [t for t in self.targets if t not in get_args(MetricTarget)]
        wanted = set(self.targets) if self.computed == "item_sums" else set()
        if bad or not self.targets or set(self.from_sums) != wanted:
            raise ProbeConfigError(
                f"Metric {self.name!r}: targets {self.targets} (from {get_args(MetricTarget)})"
                f" and from_sums for {sorted(self.from_sums)}; an item-sum metric gives one"
                " formula per target, any other none."
            )


def accuracy_from_counts(c: ClassCounts) -> Float[Tensor, "*batch"]:
    """Share of items whose class is right (equals micro-F1 for single-label classes)."""
    return c.tp.sum(-1) / c.true.sum(-1)


def macro_f1_from_counts(c: ClassCounts) -> Float[Tensor, "*batch"]:
    """Mean F1 over the classes with true + pred > 0 (sklearn's `f1_score(average="macro")`)."""
    denom = c.true + c.pred  # 2tp + fp + fn
    present = denom > 0
    f1 = torch.where(present, 2 * c.tp / denom.clamp(min=1), 0.0)
    return f1.sum(-1) / present.sum(-1)


def mcc_from_counts(c: ClassCounts) -> Float[Tensor, "*batch"]:
    """Multiclass MCC (sklearn's `matthews_corrcoef`); 0 when undefined, NaN with no item."""
    s = c.true.sum(-1)
    cov_tp = c.tp.sum(-1) * s - (c.true * c.pred).sum(-1)
    cov_pp = s * s - (c.pred * c.pred).sum(-1)
    cov_tt = s * s - (c.true * c.true).sum(-1)
    denom = cov_pp * cov_tt
    out = torch.where(denom > 0, cov_tp / denom.clamp(min=1e-300).sqrt(), 0.0)
    return torch.where(s > 0, out, torch.nan)


def label_f1(c: LabelCounts, average: Literal["macro", "micro"]) -> Float[Tensor, "*batch"]:
    """F1 of label rows as sklearn on indicator matrices: macro over every label (0 for a
    label never true nor predicted), or micro over the pooled counts; NaN with no item."""
    denom = 2 * c.tp + c.fp + c.fn
    empty = torch.where(c.n > 0, 0.0, torch.nan)
    if average == "macro":
        return torch.where(denom > 0, 2 * c.tp / denom.clamp(min=1), 0.0).mean(-1) + empty
    pooled = denom.sum(-1)
    return torch.where(pooled > 0, 2 * c.tp.sum(-1) / pooled.clamp(min=1), 0.0) + empty


def pearson_from_sums(m: Moments) -> Float[Tensor, "*batch"]:
    """Pearson's r from the moments. Give sums of roughly centred values (cancellation); NaN
    for n < 2 or a constant input (a centred sum of squares at most 1e-10 of the raw one)."""
    cxx, cyy = m.sxx - m.sx * m.sx / m.n, m.syy - m.sy * m.sy / m.n
    cxy = m.sxy - m.sx * m.sy / m.n
    ok = (cxx > 1e-10 * m.sxx) & (cyy > 1e-10 * m.syy) & (m.n >= 2)
    r = cxy / (cxx * cyy).clamp(min=1e-300).sqrt()
    return torch.where(ok, r.clamp(-1.0, 1.0), torch.nan)


_RECORDS = (
    Metric(
        "accuracy",
        "accuracy",
        True,
        "item_sums",
        ("classification", "multilabel"),
        {"classification": accuracy_from_counts, "multilabel": lambda c: c.exact / c.n},
    ),
    Metric(
        "macro_f1",
        "macro-F1",
        True,
        "item_sums",
        ("classification", "multilabel"),
        {"classification": macro_f1_from_counts, "multilabel": lambda c: label_f1(c, "macro")},
    ),
    Metric(
        "micro_f1",
        "micro-F1",
        True,
        "item_sums",
        ("classification", "multilabel"),
        {"classification": accuracy_from_counts, "multilabel": lambda c: label_f1(c, "micro")},
    ),
    Metric("uuas", "UUAS", True, "sentences", ("distance",)),
    Metric("root_acc", "root accuracy", True, "sentences", ("depth",)),
    Metric(
        "pearson",
        "Pearson correlation",
        True,
        "item_sums",
        ("regression",),
        {"regression": pearson_from_sums},
    ),
    Metric(
        "mcc",
        "Matthews correlation",
        True,
        "item_sums",
        ("classification",),
        {"classification": mcc_from_counts},
    ),
    Metric(
        "mse",
        "mean squared error",
        False,
        "item_sums",
        ("regression",),
        {"regression": lambda m: m.se / m.n},
    ),
    Metric("auroc", "AUROC", True, "ranks", ("classification",)),
    Metric("recall_at_fpr", "recall at 1% false positives", True, "ranks", ("classification",)),
    Metric("dspr", "DSpr.", True, "sentences", ("distance",)),
    Metric("nspr", "NSpr.", True, "sentences", ("depth",)),
    Metric("loss", "loss (nats per item)", False, "loss", HEADS),
)
METRICS: dict[str, Metric] = {m.name: m for m in _RECORDS}


def metric(name: str) -> Metric:
    """The record of `name`; an error listing the known names otherwise."""
    if name not in METRICS:
        raise ProbeConfigError(
            f"metric {name!r} is not in probes.metric_table; give one of {list(METRICS)}."
        )
    return METRICS[name]


def metric_names(computed: Computed, target: MetricTarget | None = None) -> tuple[str, ...]:
    """The names computed this way (for `target`, or any), in the table's order."""
    return tuple(
        m.name
        for m in METRICS.values()
        if m.computed == computed and (target is None or target in m.targets)
    )


def from_sums(
    target: MetricTarget,
    sums: ClassCounts | LabelCounts | Moments,
    names: Sequence[str] | None = None,
) -> dict[str, Float[Tensor, "*batch"]]:
    """The item-sum metrics `names` (default: every one of `target`) from `target`'s sums."""
    chosen = metric_names("item_sums", target) if names is None else tuple(names)
    return {m: METRICS[m].from_sums[target](sums) for m in chosen}


def select_choices() -> tuple[str | None, ...]:
    """What `TrainConfig.select_by` takes: None (the head's metric), the loss, an item-sum
    metric (rank metrics need the test scores, structural ones another trainer)."""
    return (None, *metric_names("loss"), *metric_names("item_sums"))


def label(name: str) -> str | None:
    """The words for a metric, or None when `name` is no metric of the table."""
    record = METRICS.get(name)
    return None if record is None else record.label


def higher_is_better(name: str) -> bool:
    """Whether a larger value of the metric `name` is better (True for a name not in the
    table: a suite's own metrics are scores)."""
    record = METRICS.get(name)
    return True if record is None else record.higher_is_better
