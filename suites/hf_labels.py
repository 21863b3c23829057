"""Label values of a Hugging Face label column as task labels, with "no label" kept apart.

Hugging Face marks an item without a label as -1 (a `ClassLabel`'s missing value, GLUE-style
test splits) or `None`. Such items are unlabelled: `LabelReader.read` returns None for them, the
caller leaves them out of training and evaluation, and `report` logs how many there were. A
train split with no labelled item is an error. A `ClassLabel` id maps to its class name, any
other class value to its string form; labels of one column that mix numbers and strings (across
splits) are refused rather than turned into look-alike classes.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from typing import Any

from probes import TargetKind
from suites.errors import TaskError

log = logging.getLogger(__name__)
NO_LABEL = -1  # Hugging Face's missing ClassLabel value


class LabelReader:
    """Reads one label column's values, split by split, counting the unlabelled items."""

    def __init__(self, column: str) -> None:
        self.column = column
        self.labelled: Counter[str] = Counter()
        self.unlabelled: Counter[str] = Counter()
        self.minus_one_ints = 0  # plain integer -1s read as "no label"
        self.first_of_type: dict[str, tuple[str, int, Any]] = {}  # "number"/"string" -> example

    def read(
        self, value: Any, kind: TargetKind, class_names: Sequence[str], split: str, row: int
    ) -> str | list[str] | float | None:
        """The task label of `value` (row `row` of split `split`), or None when unlabelled."""
        if value is None:
            self.unlabelled[split] += 1
            return None
        if kind == "regression":
            if not isinstance(value, (int, float)):
                raise self._error(split, row, value, "is not a number; regression labels are")
            self.labelled[split] += 1
            return float(value)
        if kind == "multilabel":
            if not isinstance(value, (list, tuple)):
                raise self._error(split, row, value, "is not a list of labels (multi-label)")
            names = [self._class(v, class_names, split, row) for v in value]
            self.labelled[split] += 1
            return names
        if _is_int(value) and value == NO_LABEL:
            self.minus_one_ints += 0 if class_names else 1  # a plain integer column's -1
            self.unlabelled[split] += 1
            return None
        name = self._class(value, class_names, split, row)
        self.labelled[split] += 1
        return name

    def _class(self, value: Any, class_names: Sequence[str], split: str, row: int) -> str:
        if class_names:
            if not _is_int(value):
                raise self._error(
                    split,
                    row,
                    value,
                    f"is not a class id of the ClassLabel {list(class_names)[:10]}; give every"
                    " split the same label type",
                )
            if not 0 <= value < len(class_names):
                raise self._error(
                    split,
                    row,
                    value,
                    f"lies outside the ClassLabel's ids 0..{len(class_names) - 1} (-1 = no label)",
                )
            return class_names[value]
        if value is None or isinstance(value, (list, tuple, dict)):
            raise self._error(split, row, value, "is not a class (a string or an integer)")
        self._check_one_type(value, split, row)
        return str(value)

    def _check_one_type(self, value: Any, split: str, row: int) -> None:
        family = "string" if isinstance(value, str) else "number"
        self.first_of_type.setdefault(family, (split, row, value))
        if len(self.first_of_type) > 1:
            (s1, r1, v1), (s2, r2, v2) = self.first_of_type["number"], self.first_of_type["string"]
            raise TaskError(
                f"column {self.column!r} mixes integers and strings: split {s1!r} row {r1} is"
                f" {v1!r}, split {s2!r} row {r2} is {v2!r}; make the labels one type (e.g."
                f" `table.cast_column({self.column!r}, Value('string'))` on every split)"
            )

    def _error(self, split: str, row: int, value: Any, problem: str) -> TaskError:
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        return TaskError(f"column {self.column!r} split {split!r} row {row}: {shown} {problem}")

    def report(self) -> None:
        """Log the unlabelled items per split; `TaskError` when train has no labelled item."""
        if self.unlabelled["train"] and not self.labelled["train"]:
            raise TaskError(
                f"column {self.column!r}: all {self.unlabelled['train']} train items have no"
                " label (-1 or None, e.g. a GLUE test split); train on a labelled split (pass"
                " split={...} to map the dataset's splits)"
            )
        if not self.unlabelled:
            return
        counts = ", ".join(f"{n} in {split}" for split, n in sorted(self.unlabelled.items()))
        note = ""
        if self.minus_one_ints:
            note = (
                "; if -1 is a class here, cast the column to strings first"
                f" (`table.cast_column({self.column!r}, Value('string'))`)"
            )
        log.warning(
            "Task.from_hf: %d items have no label (-1 or None: %s); they are left out of"
            " training and evaluation%s",
            sum(self.unlabelled.values()),
            counts,
            note,
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
