"""Every metric as a function of per-item sums, so resampled metrics are weighted sums.

A probe's metric on a multiset of test items depends only on sums over the items of a few
per-item features: for classes, one-hot rows of the true positive, the prediction and the truth
(`[tp | pred | true]`, 3K features); for label rows, per-label tp/fp/fn, the exact-match flag and
a one; for values, the moments of the (centred) prediction and target and the squared error.
A bootstrap resample with item counts `w` has sums `w @ features`, so every resample of every
probe is one matrix product, and a leave-one-out (jackknife) value is `total - features[i]`.

Class and label features are 0/1 and their sums are integer counts, exact in float32 (below
2^24 items); moments are float64.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import torch
from jaxtyping import Float, Shaped
from torch import Tensor

from probes._grid.inputs import TargetKind
from probes._grid.whole_counts import EXACT_LIMIT
from probes.errors import ProbeInputError
from probes.metric_table import ClassCounts, LabelCounts, Moments, from_sums, metric_names

JACKKNIFE_BYTES = 1 << 28  # bound on one chunk of leave-one-out sums (memory, not results)


class ItemSums(ABC):
    """The per-item features of one target kind and the metrics of their sums (the item-sum
    formulas of `probes.metric_table`)."""

    kind: TargetKind
    dtype: torch.dtype
    whole = False  # every feature is 0, 1 or -1 (sums are exact whole numbers; whole_counts.py)
    shared_width = 0  # trailing features that depend on the targets only (shared by probes)

    def __init__(self, outputs: int) -> None:
        self.outputs = outputs

    @property
    def metric_names(self) -> tuple[str, ...]:
        """The metrics these sums give: the item-sum metrics of the kind."""
        return metric_names("item_sums", self.kind)

    @property
    @abstractmethod
    def width(self) -> int:
        """Features per probe and item."""

    @abstractmethod
    def features(
        self, pred: Shaped[Tensor, "probe item *label"], truth: Shaped[Tensor, "probe item *label"]
    ) -> Float[Tensor, "item probe feature"]:
        """Per-item features of every probe (item-major, ready for `counts @ features`)."""

    @abstractmethod
    def metrics(
        self, sums: Float[Tensor, "*batch feature"], names: Sequence[str] | None = None
    ) -> dict[str, Float[Tensor, "*batch"]]:
        """The metrics `names` (default all) from summed features (float64)."""

    def total(self, feats: Float[Tensor, "item probe feature"]) -> Float[Tensor, "probe feature"]:
        """The features summed over the items, in float64 (whole features: summed exactly in
        their float32, which holds every count below 2^24, then widened; the same numbers)."""
        if self.whole and feats.shape[0] < EXACT_LIMIT:
            return feats.sum(0).double()
        return feats.sum(0, dtype=torch.float64)

    def jackknife(
        self,
        total: Float[Tensor, "probe feature"],
        feats: Float[Tensor, "item probe feature"],
        names: Sequence[str],
    ) -> dict[str, Float[Tensor, "item probe"]]:
        """Each metric with each item left out: `metrics(total - feats[i])`, in chunks."""
        n, p, f = feats.shape
        chunk = max(1, JACKKNIFE_BYTES // (8 * p * f))
        parts = [
            self.metrics(total - feats[start : start + chunk].double(), names)
            for start in range(0, n, chunk)
        ]
        return {m: torch.cat([part[m] for part in parts]) for m in names}


class ClassSums(ItemSums):
    """Single-label classes: `[tp one-hot | pred one-hot | true one-hot]` per item."""

    kind = "classification"
    dtype = torch.float32
    whole = True

    @property
    def shared_width(self) -> int:  # type: ignore[override]
        return self.outputs  # the true one-hot

    @property
    def width(self) -> int:
        return 3 * self.outputs

    def features(
        self, pred: Shaped[Tensor, "probe item *label"], truth: Shaped[Tensor, "probe item *label"]
    ) -> Float[Tensor, "item probe feature"]:
        k = self.outputs
        p, t = pred.long().T, truth.long().T  # [item, probe]
        out = torch.zeros(*p.shape, 3 * k, dtype=self.dtype, device=pred.device)
        out.scatter_(2, t[..., None], (p == t).to(self.dtype)[..., None])
        out.scatter_(2, (p + k)[..., None], 1.0)
        out.scatter_(2, (t + 2 * k)[..., None], 1.0)
        return out

    def metrics(
        self, sums: Float[Tensor, "*batch feature"], names: Sequence[str] | None = None
    ) -> dict[str, Float[Tensor, "*batch"]]:
        tp, pred, true = sums.double().split(self.outputs, dim=-1)
        return from_sums(self.kind, ClassCounts(tp, true, pred), names or None)

    def jackknife(
        self,
        total: Float[Tensor, "probe feature"],
        feats: Float[Tensor, "item probe feature"],
        names: Sequence[str],
    ) -> dict[str, Float[Tensor, "item probe"]]:
        """Leaving out an item changes the sums by its (true, predicted) cell's features only:
        the metrics of the K² cells, looked up per item."""
        k = self.outputs
        pred = feats[..., k : 2 * k].argmax(-1)
        true = feats[..., 2 * k :].argmax(-1)
        cells = torch.arange(k * k, device=feats.device)[None]  # cell = true * K + pred
        cell_feats = self.features(cells % k, cells // k)[:, 0].double()  # [cell, feature]
        values = self.metrics(total[None] - cell_feats[:, None], names)  # [cell, probe]
        return {m: values[m].gather(0, true * k + pred) for m in names}


class LabelSums(ItemSums):
    """Label rows (multi-label): `[tp | fp | fn]` per label, then exact match and 1."""

    kind = "multilabel"
    dtype = torch.float32
    whole = True

    @property
    def width(self) -> int:
        return 3 * self.outputs + 2

    def features(
        self, pred: Shaped[Tensor, "probe item *label"], truth: Shaped[Tensor, "probe item *label"]
    ) -> Float[Tensor, "item probe feature"]:
        p, t = pred.bool().transpose(0, 1), truth.bool().transpose(0, 1)
        exact = (p == t).all(-1, keepdim=True)
        parts = [p & t, p & ~t, ~p & t, exact, torch.ones_like(exact)]
        return torch.cat(parts, dim=-1).to(self.dtype)

    def metrics(
        self, sums: Float[Tensor, "*batch feature"], names: Sequence[str] | None = None
    ) -> dict[str, Float[Tensor, "*batch"]]:
        s = sums.double()
        tp, fp, fn = s[..., : 3 * self.outputs].split(self.outputs, dim=-1)
        return from_sums(self.kind, LabelCounts(tp, fp, fn, s[..., -2], s[..., -1]), names or None)


class ValueSums(ItemSums):
    """Values (regression): `[1, x, y, x², y², xy, (x−y)²]` of the prediction x and target y,
    both shifted by their mean over every given probe and item (well-conditioned moments; one
    shift for all probes, so features of different probes may be swapped item by item)."""

    kind = "regression"
    dtype = torch.float64

    @property
    def width(self) -> int:
        return 7

    def features(
        self, pred: Shaped[Tensor, "probe item *label"], truth: Shaped[Tensor, "probe item *label"]
    ) -> Float[Tensor, "item probe feature"]:
        x, y = pred.double().T, truth.double().T
        se = (x - y) ** 2
        x = x - x.mean()
        y = y - y.mean()
        return torch.stack([torch.ones_like(x), x, y, x * x, y * y, x * y, se], dim=-1)

    def metrics(
        self, sums: Float[Tensor, "*batch feature"], names: Sequence[str] | None = None
    ) -> dict[str, Float[Tensor, "*batch"]]:
        return from_sums(self.kind, Moments(*sums.double().unbind(-1)), names or None)


def item_sums(head: TargetKind, outputs: int) -> ItemSums:
    """The sums of a target kind with `outputs` classes or labels (1 for values)."""
    kinds: dict[str, type[ItemSums]] = {
        "classification": ClassSums,
        "multilabel": LabelSums,
        "regression": ValueSums,
    }
    if head not in kinds:
        raise ProbeInputError(f"head={head!r}: give one of {sorted(kinds)}.")
    return kinds[head](outputs)
