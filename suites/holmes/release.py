"""Reader for the Holmes release format: one folder per probing dataset.

A dataset folder holds
  samples.csv     columns `id`, `inputs`, `context`, `label`, `set-0` ... `set-k`
  config-*.yaml   `probe_name`, `probe_task_type`, `control_task_type`, `num_labels`
                  (`num_labels == 1` means regression); usually `config-none.yaml`
`inputs` and `context` hold Python literals (read with `ast.literal_eval`, never `eval`):
  sentence tasks      inputs = ["sentence"] or ["first", "second"] (a sentence pair)
  token(s) tasks      inputs = [(text, context index, char start, char end[, span group]), ...]
                      context = ["sentence", ...]; offsets index into `context[context index]`
Tuples sharing a span group form one span from their first start to their last end (`SpanItem`
spans are contiguous). Spans in two different contexts become text + text pair. `set-i` holds
fold i's split ("train"/"dev"/"test"; empty = unused). Without any `set-*` column the rows get
seeded 70/10/20 splits (Holmes §4.3).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import polars as pl

from suites.datasets import DataSource
from suites.datasets.errors import DataNotFoundError
from suites.holmes.inventory import lookup
from suites.holmes.release_config import PROBE_TASK_TYPES, find_config, read_config
from suites.readers.text_files import read_csv_frame
from suites.tasks import TargetType, Task, TaskError, make_frame

SAMPLES = "samples.csv"
SPLIT_NAMES = {"train": "train", "dev": "dev", "val": "dev", "validation": "dev", "test": "test"}
HOLMES_SPLITS = (0.7, 0.1, 0.2)  # Holmes §4.3: 70/10/20 where the data defines none


def read_holmes(
    folder: str | Path,
    *,
    fold: int = 0,
    control: str = "none",
    split_seed: int = 0,
    check_offsets: bool = True,
    data: DataSource | str | Path | None = None,
) -> Task:
    """A Holmes release-format dataset folder as a `Task` (fold `fold`'s splits).

    Phenomenon and type come from the Holmes inventory when the probe name is listed there.
    `check_offsets` verifies that every tuple's text equals its context slice (ignoring case and
    surrounding whitespace).
    """
    root = Path(folder)
    samples = root / SAMPLES
    if not samples.exists():
        raise DataNotFoundError(f"{samples} does not exist; a Holmes dataset folder has {SAMPLES}")
    config = read_config(find_config(root, control))
    frame = read_samples(samples)
    missing = [c for c in ("inputs", "label") if c not in frame.columns]
    if missing:
        raise TaskError(f"{samples}: lacks columns {missing}; expected id, inputs, context, label")
    split_column = _split_column(frame, fold, samples)
    rows, dropped = [], 0
    for number, record in enumerate(frame.iter_rows(named=True), start=1):
        where = f"{samples} data row {number} (id {record.get('id', number - 1)})"
        split = _split(record, split_column, where)
        if split is None:
            dropped += 1
            continue
        row = parse_inputs(record["inputs"], record.get("context"), where, check_offsets)
        row["label"] = _label(record["label"], config.regression, where)
        row["split"] = split
        row["where"] = where  # for error messages only; make_frame ignores it
        rows.append(row)
    _check_widths(rows, samples)
    target_type: TargetType = "regression" if config.regression else "classification"
    entry = lookup(config.probe_name, data)
    task = Task(
        name=config.probe_name,
        frame=make_frame(rows, target_type),
        target_type=target_type,
        phenomenon=entry.phenomenon if entry else "",
        phenomenon_type=entry.phenomenon_type if entry else "",
        metadata={
            "source": str(root),
            "probe_task_type": config.probe_task_type,
            "control_task_type": config.control_task_type,
            "num_labels": config.num_labels,
            "probe_type": _probe_type(config.probe_task_type, rows[0]),
            "fold": fold if split_column else None,
            "unused_rows": dropped,
        },
    )
    if not config.regression and len(task.labels) > config.num_labels:
        raise TaskError(
            f"{samples}: {len(task.labels)} distinct labels {list(task.labels)[:10]} but"
            f" {config.path.name} says num_labels: {config.num_labels}; fix one of them"
        )
    if split_column is None:
        task = task.assign_random_splits(HOLMES_SPLITS, seed=split_seed)
    return task


def read_samples(samples: Path) -> pl.DataFrame:
    """`samples.csv` as strings; `TaskError` naming the file and line when it is not UTF-8 or
    not a well-formed CSV."""
    return read_csv_frame(samples)


def read_holmes_tree(root: str | Path, **options: Any) -> list[Task]:
    """Every dataset folder (one holding `samples.csv`) under `root`, sorted by folder name."""
    folders = sorted(p.parent for p in Path(root).glob(f"*/{SAMPLES}"))
    if not folders:
        raise DataNotFoundError(f"no */{SAMPLES} under {root}; point at the unpacked Holmes data")
    return [read_holmes(folder, **options) for folder in folders]


def parse_inputs(
    inputs: str | None, context: str | None, where: str, check_offsets: bool = True
) -> dict[str, Any]:
    """One row's `inputs` (and `context`) as task-row fields: text, text_pair, spans, pair_spans."""
    values = _literal(inputs, "inputs", where)
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list | tuple) or not values:
        raise TaskError(f"{where}: inputs must be a non-empty list, got {inputs!r}")
    if all(isinstance(v, str) for v in values):
        if len(values) > 2:
            raise TaskError(f"{where}: {len(values)} input sentences; give one or two")
        return {"text": values[0], "text_pair": values[1] if len(values) == 2 else None}
    if not all(isinstance(v, list | tuple) for v in values):
        raise TaskError(
            f"{where}: inputs mix sentences and tuples ({inputs!r}); give sentences or"
            " (text, context index, start, end[, span group]) tuples"
        )
    contexts = _contexts(context, where)
    groups: dict[Any, list[tuple[int, int, int]]] = {}
    for position, value in enumerate(values):
        text, index, start, end, group = _tuple(value, position, where)
        if not 0 <= index < len(contexts):
            raise TaskError(
                f"{where}: input {value!r} points at context {index}, but the row has"
                f" {len(contexts)} context(s)"
            )
        ctx = contexts[index]
        if not 0 <= start < end <= len(ctx):
            raise TaskError(
                f"{where}: input {value!r} has offsets outside context {index} of length"
                f" {len(ctx)}; give 0 <= start < end <= len(context)"
            )
        if check_offsets and ctx[start:end].strip().lower() != text.strip().lower():
            raise TaskError(
                f"{where}: input {value!r} names {text!r} but context {index}[{start}:{end}] is"
                f" {ctx[start:end]!r}; fix the offsets (or read with check_offsets=False)"
            )
        groups.setdefault(group if group is not None else ("position", position), []).append(
            (index, start, end)
        )
    return _place_spans(groups, contexts, where)


def _place_spans(
    groups: dict[Any, list[tuple[int, int, int]]], contexts: list[str], where: str
) -> dict[str, Any]:
    spans: dict[int, list[list[int]]] = {}
    for members in groups.values():
        indices = {m[0] for m in members}
        if len(indices) > 1:
            raise TaskError(
                f"{where}: one span group spans contexts {sorted(indices)}; keep a group in one"
                " context"
            )
        spans.setdefault(members[0][0], []).append(
            [min(m[1] for m in members), max(m[2] for m in members)]
        )
    used = sorted(spans)
    if len(used) > 2:
        raise TaskError(f"{where}: inputs point at {len(used)} contexts; at most two are supported")
    row: dict[str, Any] = {"text": contexts[used[0]], "spans": spans[used[0]]}
    if len(used) == 2:
        row["text_pair"], row["pair_spans"] = contexts[used[1]], spans[used[1]]
    return row


def _literal(raw: str | None, column: str, where: str) -> Any:
    if raw is None or not str(raw).strip():
        raise TaskError(f"{where}: column {column!r} is empty; give a Python literal list")
    try:
        return ast.literal_eval(str(raw))
    except (ValueError, SyntaxError, MemoryError, RecursionError) as error:
        raise TaskError(
            f"{where}: column {column!r} is not a Python literal ({type(error).__name__}):"
            f" {str(raw)[:80]!r}; write it as e.g. ['a sentence'] or [('word', 0, 2, 6)]"
        ) from error


def _contexts(raw: str | None, where: str) -> list[str]:
    value = _literal(raw, "context", where)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise TaskError(f"{where}: context must be a list of strings, got {str(raw)[:80]!r}")
    return list(value)


def _tuple(value: Any, position: int, where: str) -> tuple[str, int, int, int, Any]:
    ok = len(value) in (4, 5) and isinstance(value[0], str)
    ok = ok and all(isinstance(v, int) and not isinstance(v, bool) for v in value[1:4])
    if not ok:
        raise TaskError(
            f"{where}: input {position} {value!r} is not (text, context index, start, end"
            "[, span group]) with integer index and offsets"
        )
    group = value[4] if len(value) == 5 else None
    return value[0], value[1], value[2], value[3], group


def _label(raw: str | None, regression: bool, where: str) -> str | float:
    if raw is None or not str(raw).strip():
        raise TaskError(f"{where}: the label is empty; give every row a label")
    if not regression:
        return str(raw).strip()
    try:
        return float(raw)
    except ValueError as error:
        raise TaskError(
            f"{where}: label {raw!r} is not a number, but num_labels: 1 marks regression"
        ) from error


def _split_column(frame: pl.DataFrame, fold: int, samples: Path) -> str | None:
    folds = [c for c in frame.columns if c.startswith("set-")]
    if not folds:
        return None
    if f"set-{fold}" not in frame.columns:
        raise TaskError(f"{samples}: no column set-{fold}; choose fold from {folds}")
    return f"set-{fold}"


def _split(record: dict[str, Any], column: str | None, where: str) -> str | None:
    if column is None:
        return "train"  # replaced by seeded random splits after reading
    value = record[column]
    if value is None or not str(value).strip():
        return None
    name = SPLIT_NAMES.get(str(value).strip().lower())
    if name is None:
        raise TaskError(f"{where}: {column} is {value!r}; use train, dev or test (empty = unused)")
    return name


def _probe_type(task_type: str, row: dict[str, Any]) -> str:
    """The Holmes probe type; a token(s) task with two spans is a token(s) pair task."""
    spans = len(row.get("spans") or []) + len(row.get("pair_spans") or [])
    if "TOKENS" in task_type or "SPANS" in task_type:
        return "token(s) pair classification" if spans >= 2 else "token(s) classification"
    return PROBE_TASK_TYPES[task_type]


def _check_widths(rows: list[dict[str, Any]], samples: Path) -> None:
    """Every row needs the same number of spans per text (they concatenate into one feature)."""
    if not rows:
        raise TaskError(f"{samples}: no usable rows (every row is unused in this fold)")

    def shape(row: dict[str, Any]) -> tuple[int, int | None]:
        pair = None if row.get("text_pair") is None else len(row.get("pair_spans") or [])
        return len(row.get("spans") or []), pair

    first = shape(rows[0])
    for row in rows:
        if shape(row) != first:
            raise TaskError(
                f"{row['where']}: (spans, pair spans) is {shape(row)} but {rows[0]['where']} has"
                f" {first}; all rows of a dataset need the same input shape"
            )
