"""The unified task schema every suite uses: a polars frame of items plus label vocabulary.

Frame columns (one row per item):
  text        str            the sentence (or first text)
  text_pair   str | null     optional second text (sentence-pair tasks)
  spans       list[list[i64]] zero, one or two `[start, end)` character spans into `text`
  pair_spans  list[list[i64]] spans into `text_pair` (usually empty)
  label       str | list[str] | f64   class name, label set (multi-label) or value (regression)
  split       str            "train" | "dev" | "test"
  key         str            surface text of the span(s), for heuristics and control tasks
A task converts to `internals.SpanItem`s (`items()`) and to `probes` inputs (`targets`, `splits`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import polars as pl
import torch
from torch import Tensor

from internals import SpanItem
from probes import SPLIT_NAMES, TargetKind
from suites.errors import TaskError
from suites.hf_source import HFData, dataset_name, load_tables, task_rows

TargetType = TargetKind  # the kinds `probes` trains: classification, multilabel, regression
SPLITS = SPLIT_NAMES
SPLIT_CODES = {
    name: code for code, name in enumerate(SPLIT_NAMES)
}  # probes: 0 train, 1 dev, 2 test
PAIR_SEPARATOR = " ||| "
SCHEMA = {
    "text": pl.String,
    "text_pair": pl.String,
    "spans": pl.List(pl.List(pl.Int64)),
    "pair_spans": pl.List(pl.List(pl.Int64)),
    "split": pl.String,
    "key": pl.String,
}


def span_key(text: str, spans: Sequence[Sequence[int]]) -> str:
    """The key of an item: its span texts joined in order (the whole text when no span)."""
    if not spans:
        return text
    return PAIR_SEPARATOR.join(text[s:e] for s, e in spans)


def make_frame(rows: Sequence[dict[str, Any]], target_type: TargetType) -> pl.DataFrame:
    """Build a task frame from row dicts (text, label, split; optional spans, text_pair, key)."""
    if not rows:
        raise TaskError("the dataset is empty; give at least one item")
    label_type = {
        "classification": pl.String,
        "multilabel": pl.List(pl.String),
        "regression": pl.Float64,
    }[target_type]
    filled = []
    for row in rows:
        spans = [list(map(int, s)) for s in row.get("spans") or []]
        filled.append(
            {
                "text": row["text"],
                "text_pair": row.get("text_pair"),
                "spans": spans,
                "pair_spans": [list(map(int, s)) for s in row.get("pair_spans") or []],
                "label": row["label"],
                "split": row.get("split", "train"),
                "key": row.get("key") or span_key(row["text"], spans),
            }
        )
    schema: dict[str, Any] = {**SCHEMA, "label": label_type}
    return pl.DataFrame(filled, schema=schema)


@dataclass(frozen=True)
class Task:
    """A probing dataset: items, labels, splits and metadata (Holmes-style schema).

    Readers (`suites.edge.read_conllu`, `Task.from_hf`, ...) build tasks; by hand, `make_frame`
    turns row dicts into the frame.

    Examples:
        >>> from suites.tasks import Task, make_frame
        >>> rows = [
        ...     {"text": "The cat sat.", "spans": [(4, 7)], "label": "singular", "split": "train"},
        ...     {"text": "Dogs bark.", "spans": [(0, 4)], "label": "plural", "split": "test"},
        ... ]
        >>> task = Task("number", make_frame(rows, "classification"))
        >>> task.labels, task.input_type, task.keys
        (('plural', 'singular'), 'span', ['cat', 'Dogs'])
        >>> task.targets.tolist(), task.splits.tolist()  # class ids; split codes (0 train, 2 test)
        ([1, 0], [0, 2])
    """

    name: str
    frame: pl.DataFrame
    target_type: TargetType = "classification"
    labels: tuple[str, ...] = ()
    phenomenon: str = ""
    phenomenon_type: str = ""  # morphology | syntax | semantics | reasoning | discourse
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.frame.height == 0:
            raise TaskError(f"task {self.name!r} has no items; check the data file and filters")
        missing = [c for c in (*SCHEMA, "label") if c not in self.frame.columns]
        if missing:
            raise TaskError(f"task {self.name!r}: frame lacks columns {missing}; use make_frame")
        bad = set(self.frame["split"].unique().to_list()) - set(SPLITS)
        if bad:
            raise TaskError(f"task {self.name!r}: split values {sorted(bad)}; use train/dev/test")
        if self.target_type != "regression" and not self.labels:
            object.__setattr__(self, "labels", tuple(sorted(self._label_names())))

    def _label_names(self) -> set[str]:
        column = self.frame["label"]
        if self.target_type == "multilabel":
            return set(column.explode().drop_nulls().to_list())
        return set(column.to_list())

    @classmethod
    def from_hf(
        cls,
        data: HFData,
        *,
        text: str = "text",
        label: str = "label",
        text_pair: str | None = None,
        spans: str | None = None,
        pair_spans: str | None = None,
        split: str | Mapping[str, str] | None = None,
        split_column: str | None = None,
        target_type: TargetType | None = None,
        name: str | None = None,
        config: str | None = None,
        revision: str | None = None,
    ) -> Task:
        """A task from a Hugging Face dataset, a hub name, or a local parquet/CSV/JSONL file.

        `text`, `label` (and optional `text_pair`, `spans`, `pair_spans`: columns of character
        spans `[start, end]` or lists of them) name the columns. A `DatasetDict`'s splits become
        train/dev/test by name (`validation`/`dev` are dev); `split=` picks one split or maps
        them (`{"train": "train", "validation": "test"}`); a single table is all `split`
        (default train) unless `split_column=` holds train/dev/test per row. The label column
        decides the target type (ClassLabel or strings: class; lists: multilabel; floats:
        regression) unless `target_type=` says. A label of -1 or None (Hugging Face's "no
        label", e.g. GLUE test splits) marks an unlabelled item: it is left out of training and
        evaluation and counted in a logged warning; a train split without a labelled item is a
        `TaskError`, and so are labels that mix integers and strings. Integer labels become
        classes by their string form, so their ids are dense whatever the values. Needs
        `pip install lingprobe[hf]`.

        Examples:
            >>> from datasets import Dataset
            >>> table = Dataset.from_dict({"sentence": ["A cat.", "Two dogs."], "n": ["sg", "pl"]})
            >>> task = Task.from_hf(table, text="sentence", label="n", name="number")
            >>> task.labels, len(task)
            (('pl', 'sg'), 2)
        """
        tables = load_tables(data, split, config, revision)
        rows, kind, labels = task_rows(
            tables,
            text=text,
            label=label,
            text_pair=text_pair,
            spans=spans,
            pair_spans=pair_spans,
            split_column=split_column,
            target_type=target_type,
        )
        return cls(
            name=name or dataset_name(data),
            frame=make_frame(rows, kind),
            target_type=kind,
            labels=tuple(labels),
        )

    def __len__(self) -> int:
        return self.frame.height

    @property
    def input_type(self) -> str:
        """`sentence`, `sentence pair`, `span` or `span pair` (Holmes task types)."""
        n_spans = int(self.frame["spans"].list.len().max() or 0)  # type: ignore[arg-type]
        paired = self.frame["text_pair"].is_not_null().any()
        if n_spans == 0:
            return "sentence pair" if paired else "sentence"
        return "span pair" if n_spans >= 2 or paired else "span"

    @property
    def num_classes(self) -> int:
        """Number of labels (1 for regression)."""
        return len(self.labels) if self.target_type != "regression" else 1

    def items(self) -> list[SpanItem]:
        """The items as `internals.SpanItem`s, in frame order."""
        return [
            SpanItem(
                text,
                spans=tuple(tuple(s) for s in spans),
                text_pair=pair,
                pair_spans=tuple(tuple(s) for s in pair_spans),
            )
            for text, pair, spans, pair_spans in self.frame.select(
                "text", "text_pair", "spans", "pair_spans"
            ).iter_rows()
        ]

    @property
    def targets(self) -> Tensor:
        """Class ids (int64), a 0/1 `[item, class]` matrix (multi-label) or floats (regression)."""
        column = self.frame["label"]
        if self.target_type == "regression":
            return torch.tensor(column.to_list(), dtype=torch.float32)
        index = {label: i for i, label in enumerate(self.labels)}
        unknown = self._label_names() - set(index)
        if unknown:
            raise TaskError(
                f"task {self.name!r}: labels {sorted(unknown)[:5]} are not in its label set"
                f" {list(self.labels)[:10]}; add them to `labels` or drop those rows"
            )
        if self.target_type == "multilabel":
            matrix = torch.zeros(self.frame.height, len(self.labels))
            for row, names in enumerate(column.to_list()):
                matrix[row, [index[n] for n in names]] = 1.0
            return matrix
        return torch.tensor([index[label] for label in column.to_list()], dtype=torch.int64)

    @property
    def splits(self) -> Tensor:
        """Split codes per item: 0 train, 1 dev, 2 test (the `probes` convention)."""
        return torch.tensor([SPLIT_CODES[s] for s in self.frame["split"].to_list()])

    @property
    def keys(self) -> list[str]:
        """Span surface keys, one per item (for control tasks and heuristics)."""
        return self.frame["key"].to_list()

    def split(self, name: str) -> pl.DataFrame:
        """Rows of one split."""
        return self.frame.filter(pl.col("split") == name)

    def with_frame(self, frame: pl.DataFrame, **changes: Any) -> Task:
        """The same task (labels, metadata) over other rows."""
        return replace(self, frame=frame, **changes)

    def carve_dev(self, fraction: float = 0.1, seed: int = 0) -> Task:
        """Move a seeded `fraction` of train items to dev when the task has no dev items."""
        if self.frame.filter(pl.col("split") == "dev").height:
            return self
        train = [i for i, s in enumerate(self.frame["split"].to_list()) if s == "train"]
        chosen = set(random.Random(seed).sample(train, max(1, round(fraction * len(train)))))
        split = [("dev" if i in chosen else s) for i, s in enumerate(self.frame["split"])]
        return self.with_frame(self.frame.with_columns(pl.Series("split", split)))

    def assign_random_splits(
        self, fractions: tuple[float, float, float] = (0.7, 0.1, 0.2), seed: int = 0
    ) -> Task:
        """Seeded train/dev/test assignment (Holmes: 70/10/20 where a dataset has none)."""
        order = list(range(self.frame.height))
        random.Random(seed).shuffle(order)
        n_train = round(fractions[0] * len(order))
        n_dev = round(fractions[1] * len(order))
        split = ["test"] * len(order)
        for rank, row in enumerate(order):
            if rank < n_train:
                split[row] = "train"
            elif rank < n_train + n_dev:
                split[row] = "dev"
        return self.with_frame(self.frame.with_columns(pl.Series("split", split)))

    def subsample(self, per_split: dict[str, int], seed: int = 0) -> Task:
        """At most `per_split[name]` seeded random rows of each named split (others kept)."""
        parts = []
        for name in SPLITS:
            rows = self.split(name)
            limit = per_split.get(name)
            if limit is not None and rows.height > limit:
                rows = rows.sample(n=limit, seed=seed, shuffle=True)
            parts.append(rows)
        return self.with_frame(pl.concat(parts))

    @staticmethod
    def combine(train: Task, test: Task, name: str | None = None) -> Task:
        """Train rows of `train` (and its dev) with `test`'s rows as the test split."""
        if train.target_type != test.target_type:
            raise TaskError(
                f"cannot combine {train.target_type} task {train.name!r} with"
                f" {test.target_type} task {test.name!r}"
            )
        frame = pl.concat(
            [
                train.frame.filter(pl.col("split") != "test"),
                test.frame.with_columns(pl.lit("test").alias("split")),
            ]
        )
        labels = tuple(sorted(set(train.labels) | set(test.labels)))
        return replace(train, name=name or train.name, frame=frame, labels=labels)
