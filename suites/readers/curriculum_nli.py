"""Reading the curriculum NLI benchmark (Chen & Gao 2022): one `Task` per phenomenon.

A phenomenon is a folder holding `train.jsonl` and `val.jsonl`, one NLI pair per line with
`premise`, `hypothesis`, `gold_label` (and `idx`). `val` is the evaluation split (the paper's code
evaluates on it), so its rows get split "test"; dev sets are carved from train where needed.
Frame rows: text = premise, text_pair = hypothesis, label = gold label, plus the source `idx`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from suites.datasets import DataSource, as_source
from suites.datasets.errors import DataNotFoundError
from suites.readers.jsonl import read_jsonl
from suites.tasks import Task, TaskError, make_frame

THREE_WAY = ("entailment", "neutral", "contradiction")  # paper §3.3: 3-way NLI labels
TWO_WAY = ("entailed", "not-entailed")  # paper §3.3: 2-way NLI labels
SCHEMES = {"3-way": THREE_WAY, "2-way": TWO_WAY}
DATASET = "curriculum-nli"  # the registry name
FILE_SPLITS = {"train": "train", "val": "test", "dev": "dev", "test": "test"}
# Our coarse grouping of the shared phenomena into the task schema's phenomenon types.
PHENOMENON_TYPES = {
    "boolean": "reasoning",
    "comparative": "reasoning",
    "conditional": "reasoning",
    "negation": "reasoning",
    "quantifier": "reasoning",
    "syntactic_alternation": "syntax",
    "syntactic_variation": "syntax",
    "lexical": "semantics",
}


def label_scheme(labels: Sequence[str]) -> str:
    """`3-way` or `2-way` for a set of gold labels; `TaskError` for anything else."""
    seen = set(labels)
    for name, scheme in SCHEMES.items():
        if seen <= set(scheme):
            return name
    raise TaskError(
        f"labels {sorted(seen)} are neither 3-way {list(THREE_WAY)} nor 2-way {list(TWO_WAY)};"
        " fix the gold_label values of the data"
    )


def _read_rows(path: Path, split: str) -> list[dict]:
    rows = []
    for number, record in read_jsonl(path, ("premise", "hypothesis", "gold_label"), "an NLI line"):
        rows.append(
            {
                "text": str(record["premise"]),
                "text_pair": str(record["hypothesis"]),
                "label": str(record["gold_label"]),
                "split": split,
                "key": str(record["hypothesis"]),
                "idx": _index(record.get("idx", number - 1), path, number),
            }
        )
    if not rows:
        raise TaskError(f"{path} holds no NLI pairs; check the file")
    return rows


def _index(value: object, path: Path, number: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TaskError(
            f"{path}:{number}: idx {value!r} is a {type(value).__name__}; idx is the pair's"
            " integer id (or leave it out: the line order is used)"
        )
    return value


def _phenomenon_files(path: Path) -> list[tuple[Path, str]]:
    if path.is_file():
        if path.stem not in FILE_SPLITS:
            raise TaskError(
                f"{path}: cannot tell the split from the name; call it train/val/dev/test.jsonl"
            )
        return [(path, FILE_SPLITS[path.stem])]
    if not path.is_dir():
        raise DataNotFoundError(f"{path} does not exist; give a phenomenon folder or a .jsonl file")
    files = [(path / f"{stem}.jsonl", split) for stem, split in FILE_SPLITS.items()]
    found = [(f, s) for f, s in files if f.exists()]
    if not found:
        raise TaskError(f"{path} holds no train.jsonl / val.jsonl; point at a phenomenon folder")
    return found


def read(path: str | Path, *, name: str | None = None) -> Task:
    """One phenomenon as a `Task`: a folder with train.jsonl and val.jsonl, or one such file.

    Labels keep the paper's order (3-way: entailment, neutral, contradiction; 2-way: entailed,
    not-entailed); `metadata["label_scheme"]` says which.
    """
    path = Path(path)
    phenomenon = name or (path.parent.name if path.is_file() else path.name)
    return _task(_phenomenon_files(path), phenomenon, str(path))


def read_files(paths: Sequence[str | Path], phenomenon: str) -> Task:
    """One phenomenon from its split files (`train.jsonl`, `val.jsonl`, ...), e.g. cached ones."""
    files = []
    for path in map(Path, paths):
        if path.stem not in FILE_SPLITS:
            raise TaskError(
                f"{path}: cannot tell the split from the name; call it train/val/dev/test.jsonl"
            )
        files.append((path, FILE_SPLITS[path.stem]))
    return _task(files, phenomenon, ", ".join(str(p) for p in paths))


def _task(files: list[tuple[Path, str]], phenomenon: str, source: str) -> Task:
    rows = [row for file, split in files for row in _read_rows(file, split)]
    scheme = label_scheme([r["label"] for r in rows])
    frame = make_frame(rows, "classification").with_columns(
        pl.Series("idx", [r["idx"] for r in rows], dtype=pl.Int64)
    )
    return Task(
        name=f"curriculum/{phenomenon}",
        frame=frame,
        target_type="classification",
        labels=SCHEMES[scheme],
        phenomenon=phenomenon,
        phenomenon_type=PHENOMENON_TYPES.get(phenomenon, ""),
        metadata={"label_scheme": scheme, "source": source, "evaluation_split": "val"},
    )


def registry_phenomena(data: DataSource | str | Path | None = None) -> list[str]:
    """The phenomena the data source offers (36 in full; the embedded sample's with "samples")."""
    dataset = as_source(data).dataset(DATASET)
    return sorted({f.key.split("/")[0] for f in dataset.files if f.members or "/" in f.key})


def load_phenomena(
    phenomena: Sequence[str] | None = None, data: DataSource | str | Path | None = None
) -> dict[str, Task]:
    """Phenomena through the dataset registry (`data`: "full", "samples" or a data folder).

    Default: the eight phenomena this suite types (`PHENOMENON_TYPES`) that the source offers.
    """
    source = as_source(data)
    offered = registry_phenomena(source)
    chosen = list(phenomena) if phenomena else [p for p in PHENOMENON_TYPES if p in offered]
    unknown = [p for p in chosen if p not in offered]
    if unknown:
        raise TaskError(
            f"phenomena {unknown} are not in {DATASET!r}"
            f"{' (embedded sample)' if source.samples else ''}; choose from {offered}"
        )
    return {
        p: read_files([source.path(DATASET, f"{p}/{s}") for s in ("train", "val")], p)
        for p in chosen
    }


def read_all(root: str | Path, phenomena: Sequence[str] | None = None) -> dict[str, Task]:
    """Every phenomenon folder under `root` (or the named ones), by phenomenon name."""
    root = Path(root)
    if not root.is_dir():
        raise DataNotFoundError(f"{root} is not a folder; give the curriculum_nli data folder")
    available = sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.jsonl")))
    chosen = list(phenomena) if phenomena is not None else available
    unknown = [p for p in chosen if p not in available]
    if unknown:
        raise DataNotFoundError(
            f"phenomena {unknown} are not folders of {root}; choose from {available}"
        )
    if not chosen:
        raise DataNotFoundError(f"{root} holds no phenomenon folders with .jsonl files")
    return {p: read(root / p) for p in chosen}
