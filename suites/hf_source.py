"""Any Hugging Face `datasets` dataset, or a local parquet / CSV / JSON-lines file, as task rows.

`Task.from_hf` is the public entry point. Columns are named by the caller; every missing column is
reported with the columns that exist. Labels: a `ClassLabel` column gives its class names, a list
of them (or of strings) a multi-label task, floats a regression task, anything else classes by
their string form; -1 or None is "no label" (`suites.hf_labels`). Splits: a `DatasetDict`'s
splits map to train/dev/test by name (`validation` and `dev` to dev), or as `split=` says; a
single table takes `split_column=` or one split name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from probes import SPLIT_NAMES, TargetKind
from suites.errors import TaskError
from suites.hf_labels import LabelReader
from suites.readers.text_files import csv_problem, read_utf8

HFData = Any  # a datasets.Dataset, a datasets.DatasetDict, a hub name or a local file path
TargetType = TargetKind
STANDARD_SPLITS = {"train": "train", "validation": "dev", "valid": "dev", "dev": "dev"}
STANDARD_SPLITS |= {"test": "test"}
FILE_BUILDERS = {".parquet": "parquet", ".csv": "csv", ".tsv": "csv", ".json": "json"}
FILE_BUILDERS |= {".jsonl": "json"}


def _datasets() -> Any:
    try:
        import datasets
    except ImportError as error:  # an optional extra
        raise TaskError(
            "Task.from_hf needs the Hugging Face `datasets` package: pip install lingprobe[hf]"
        ) from error
    return datasets


def load_tables(
    data: HFData, split: str | Mapping[str, str] | None, config: str | None, revision: str | None
) -> dict[str, Any]:
    """{our split name: datasets.Dataset} from what the user passed."""
    datasets = _datasets()
    if isinstance(data, (str, Path)):
        data = _open(datasets, data, config, revision)
    if isinstance(data, datasets.Dataset):
        if isinstance(split, Mapping):
            raise TaskError("split= as a mapping needs a DatasetDict; give one split name here")
        name = split or "train"
        if name not in SPLIT_NAMES:
            raise TaskError(f"split={name!r}: a single table's split must be one of {SPLIT_NAMES}")
        return {name: data}
    if not isinstance(data, datasets.DatasetDict):
        raise TaskError(
            f"Task.from_hf takes a datasets.Dataset, a DatasetDict, a hub name or a local"
            f" parquet/CSV/JSON-lines file, not {type(data).__name__}"
        )
    if isinstance(split, str):
        split = {split: STANDARD_SPLITS.get(split, "train")}
    mapping = dict(split) if split is not None else {s: STANDARD_SPLITS.get(s, s) for s in data}
    missing = [s for s in mapping if s not in data]
    if missing:
        raise TaskError(f"split(s) {missing} are not in the dataset; its splits: {list(data)}")
    wrong = {s: ours for s, ours in mapping.items() if ours not in SPLIT_NAMES}
    if wrong:
        raise TaskError(
            f"split(s) {sorted(wrong)} have no train/dev/test meaning; pass split={{...}}"
            f" mapping each of {list(data)} to one of {SPLIT_NAMES}"
        )
    tables: dict[str, Any] = {}
    for hf_name, ours in mapping.items():
        if ours in tables:
            tables[ours] = datasets.concatenate_datasets([tables[ours], data[hf_name]])
        else:
            tables[ours] = data[hf_name]
    return tables


def dataset_name(data: HFData) -> str:
    """A task name for `data`: a file's stem, a hub name, or the dataset's own name."""
    if isinstance(data, Path) or (isinstance(data, str) and Path(data).expanduser().is_file()):
        return Path(data).stem
    if isinstance(data, str):
        return data
    info = getattr(data, "info", None)
    if info is None and hasattr(data, "values"):  # a DatasetDict: its first split's info
        info = getattr(next(iter(data.values()), None), "info", None)
    return str(getattr(info, "dataset_name", None) or "hf-dataset")


def _open(datasets: Any, data: str | Path, config: str | None, revision: str | None) -> Any:
    path = Path(data).expanduser()
    if path.is_file():
        builder = FILE_BUILDERS.get(path.suffix.lower())
        if builder is None:
            raise TaskError(f"{path}: read .parquet, .csv, .tsv, .json or .jsonl files")
        delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
        options = {"delimiter": delimiter} if builder == "csv" else {}
        try:
            return datasets.load_dataset(builder, data_files=str(path), **options)
        except TaskError:
            raise
        except Exception as error:  # datasets wraps the parser's error: name the file and line
            problem = csv_problem(path, read_utf8(path), delimiter) if builder == "csv" else None
            raise TaskError(problem or _unreadable(path, error)) from None
    try:
        return datasets.load_dataset(str(data), config, revision=revision)
    except (FileNotFoundError, ConnectionError, ValueError) as error:
        raise TaskError(
            f"cannot load {str(data)!r}: it is neither a local file nor a dataset the hub serves"
            f" here ({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''})"
        ) from error


def _unreadable(path: Path, error: BaseException) -> str:
    cause = error.__cause__ or error.__context__ or error
    first = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
    return f"{path}: cannot read it as a {path.suffix} table ({first[:200]}); check the file"


def _check_columns(table: Any, wanted: Mapping[str, str | None]) -> None:
    for argument, column in wanted.items():
        if column is not None and column not in table.column_names:
            raise TaskError(
                f"column {column!r} (the {argument}= argument) is not in the dataset; its columns"
                f" are {table.column_names}"
            )


def _label_kind(datasets: Any, feature: Any, values: Sequence[Any]) -> tuple[TargetType, list]:
    """(target type, class names or []) from the label column's feature and values."""
    inner = getattr(feature, "feature", None)
    if isinstance(feature, datasets.ClassLabel):
        return "classification", list(feature.names)
    if isinstance(inner, datasets.ClassLabel):
        return "multilabel", list(inner.names)
    first = next((v for v in values if v is not None), None)
    if isinstance(first, (list, tuple)):
        return "multilabel", []
    if isinstance(first, float):
        return "regression", []
    return "classification", []


def _spans(value: Any, column: str, row: int) -> list[list[int]]:
    if value is None:
        return []
    spans = [value] if value and isinstance(value[0], int) else value
    try:
        out = [[int(s), int(e)] for s, e in spans]
    except (TypeError, ValueError) as error:
        raise TaskError(
            f"column {column!r} row {row}: {value!r} is not [start, end] or a list of them"
        ) from error
    if any(isinstance(x, bool) or not float(x).is_integer() for pair in spans for x in pair):
        raise TaskError(f"column {column!r} row {row}: span bounds must be whole numbers")
    return out


def task_rows(
    tables: Mapping[str, Any],
    *,
    text: str,
    label: str,
    text_pair: str | None = None,
    spans: str | None = None,
    pair_spans: str | None = None,
    split_column: str | None = None,
    target_type: TargetType | None = None,
) -> tuple[list[dict[str, Any]], TargetType, list[str]]:
    """(rows for `make_frame`, target type, class names) of every table."""
    datasets = _datasets()
    rows: list[dict[str, Any]] = []
    kinds: set[str] = set()
    names: list[str] = []
    reader = LabelReader(label)
    columns = {
        "text": text,
        "label": label,
        "text_pair": text_pair,
        "spans": spans,
        "pair_spans": pair_spans,
        "split_column": split_column,
    }
    for ours, table in tables.items():
        _check_columns(table, columns)
        labels = table[label]
        kind, class_names = _label_kind(datasets, table.features[label], labels)
        kind = target_type or kind
        kinds.add(kind)
        names = names or class_names
        for i, record in enumerate(table):
            split = ours if split_column is None else str(record[split_column])
            if split not in SPLIT_NAMES:
                raise TaskError(
                    f"column {split_column!r} row {i}: split {split!r}; use one of {SPLIT_NAMES}"
                )
            value = reader.read(record[label], kind, class_names, split, i)
            if value is None:
                continue  # unlabelled: out of training and evaluation, counted by the reader
            if not isinstance(record[text], str):
                raise TaskError(f"column {text!r} row {i}: {record[text]!r} is not a string")
            rows.append(
                {
                    "text": record[text],
                    "text_pair": record[text_pair] if text_pair else None,
                    "spans": _spans(record[spans], spans, i) if spans else [],
                    "pair_spans": _spans(record[pair_spans], pair_spans, i) if pair_spans else [],
                    "label": value,
                    "split": split,
                }
            )
    if len(kinds) != 1:
        raise TaskError(f"the splits' label columns disagree in kind ({sorted(kinds)})")
    reader.report()
    return rows, kinds.pop(), names  # type: ignore[return-value]
