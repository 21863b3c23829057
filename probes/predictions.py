"""`TestPredictions`: every probe's predictions on the test items, kept compactly with results.

They are what the bootstrap and the paired tests resample (`probes.bootstrap`,
`probes.significance`): class ids as int8/int16, label rows as bool, values as float32.
Classification probes also keep their class scores on the test items (`scores`,
log-probabilities, float32) for the rank metrics (`probes.rank_metrics`: AUROC, recall at a
false-positive rate). The
targets are stored once per distinct target row (the task's, and each seed's control labels)
with `target_row` mapping each probe to its row. `items` are the test items' positions among
the items given to `fit_probes`, so runs of two models on the same items can be paired.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import torch
from jaxtyping import Bool, Float, Int, Shaped
from safetensors.torch import load as safetensors_load
from safetensors.torch import save as safetensors_bytes
from torch import Tensor

from probes._grid.inputs import TargetKind
from probes.errors import ProbeInputError

FILE = "test_predictions.safetensors"
HEADS: dict[str, TargetKind] = {
    "classification": "classification",
    "multilabel": "multilabel",
    "regression": "regression",
}


def compact_ids(values: Tensor, num_classes: int) -> Tensor:
    """Class ids in the smallest signed integer type that holds `num_classes` classes."""
    for dtype in (torch.int8, torch.int16, torch.int32):
        if num_classes <= torch.iinfo(dtype).max + 1:
            return values.to(dtype)
    return values.long()


@dataclass(frozen=True)
class TestPredictions:
    """Predictions `[probe, item, *label]`, targets `[row, item, *label]`, probe -> row, and
    (classification) the class log-probabilities `scores` `[probe, item, class]` or None."""

    __test__ = False  # not a pytest class

    items: Int[Tensor, " item"]
    pred: Shaped[Tensor, "probe item *label"]
    targets: Shaped[Tensor, "row item *label"]
    target_row: Int[Tensor, " probe"]
    head: TargetKind
    outputs: int  # classes (labels; 1 for values)
    scores: Float[Tensor, "probe item class"] | None = None

    @classmethod
    def compact(
        cls,
        items: Int[Tensor, " item"],
        pred: Shaped[Tensor, "probe item *label"],
        targets: Shaped[Tensor, "row item *label"],
        target_row: Int[Tensor, " probe"],
        head: TargetKind,
        outputs: int,
        scores: Float[Tensor, "probe item class"] | None = None,
    ) -> TestPredictions:
        """Stored types (int8/int16 ids, bool label rows, float32 values and scores), CPU."""
        if head == "classification":
            pred, targets = compact_ids(pred, outputs), compact_ids(targets, outputs)
        elif head == "multilabel":
            pred, targets = pred.bool(), targets > 0.5
        else:
            pred = pred.float()
        return cls(
            items.long().cpu(),
            pred.cpu(),
            targets.cpu(),
            target_row.long().cpu(),
            head,
            outputs,
            None if scores is None else scores.float().cpu(),
        )

    @property
    def n_items(self) -> int:
        """Test items."""
        return int(self.items.shape[0])

    def truth(
        self, probes: Int[Tensor, " probe"] | None = None
    ) -> Shaped[Tensor, "probe item *label"]:
        """The targets each probe (all, or `probes`) is scored against."""
        rows = self.target_row if probes is None else self.target_row[probes]
        return self.targets[rows]

    def select(self, probes: Int[Tensor, " probe"]) -> tuple[Tensor, Tensor]:
        """(predictions, targets) of the probes at `probes`."""
        return self.pred[probes], self.truth(probes)

    def same_items(self, other: TestPredictions) -> bool:
        """Whether `other` scored the same test items with the same kind of target."""
        return (
            self.head == other.head
            and self.outputs == other.outputs
            and torch.equal(self.items, other.items)
        )

    def concat(self, other: TestPredictions) -> TestPredictions:
        """Both runs' probes (this one's first) on the same test items, for paired tests."""
        if not self.same_items(other):
            raise ProbeInputError(
                "the two results were not scored on the same test items (items, head or classes"
                f" differ: {self.n_items} vs {other.n_items} items, {self.head!r}/{self.outputs}"
                f" vs {other.head!r}/{other.outputs}); pair runs fitted with the same splits."
            )
        n_rows = self.targets.shape[0]
        return TestPredictions(
            self.items,
            torch.cat([self.pred, other.pred]),
            torch.cat([self.targets, other.targets]),
            torch.cat([self.target_row, other.target_row + n_rows]),
            self.head,
            self.outputs,
            None
            if self.scores is None or other.scores is None
            else torch.cat([self.scores, other.scores]),
        )

    def subset(self, keep: Bool[Tensor, " item"]) -> TestPredictions:
        """The predictions of the test items where `keep` is True (e.g. a filtered test set)."""
        if keep.shape != (self.n_items,):
            raise ProbeInputError(
                f"keep: shape {tuple(keep.shape)}; give one flag per test item ({self.n_items})"
            )
        at = keep.nonzero().flatten()
        return TestPredictions(
            self.items[at],
            self.pred.index_select(1, at),
            self.targets.index_select(1, at),
            self.target_row,
            self.head,
            self.outputs,
            None if self.scores is None else self.scores.index_select(1, at),
        )

    def to_bytes(self) -> bytes:
        """The predictions as a safetensors file's bytes (the caller writes them atomically)."""
        tensors = {
            "items": self.items,
            "pred": self.pred,
            "targets": self.targets,
            "target_row": self.target_row,
        }
        if self.scores is not None:
            tensors["scores"] = self.scores
        meta = {"head": self.head, "outputs": str(self.outputs)}
        return safetensors_bytes({n: t.contiguous() for n, t in tensors.items()}, metadata=meta)

    @classmethod
    def from_bytes(cls, data: bytes, source: str) -> TestPredictions:
        """Read bytes written by `to_bytes`; `source` names the file in errors."""
        meta = safetensors_metadata(data)
        t = safetensors_load(data)
        head = HEADS.get(meta.get("head", ""))
        if head is None:
            raise ProbeInputError(f"{source}: unknown head {meta.get('head')!r} in its metadata.")
        outputs = int(meta["outputs"])
        parts = (t["items"], t["pred"], t["targets"], t["target_row"])
        return cls(*parts, head, outputs, t.get("scores"))


def safetensors_metadata(data: bytes) -> dict[str, str]:
    """The `__metadata__` of a safetensors file held in memory."""
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + size])
    return dict(header.get("__metadata__") or {})
