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

from suites.jsonl import read_jsonl
from suites.tasks import Task, TaskError, make_frame

THREE_WAY = ("entailment", "neutral", "contradiction")  # paper §3.3: 3-way NLI labels
TWO_WAY = ("entailed", "not-entailed")  # paper §3.3: 2-way NLI labels
SCHEMES = {"3-way": THREE_WAY, "2-way": TWO_WAY}
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
        raise FileNotFoundError(f"{path} does not exist; give a phenomenon folder or a .jsonl file")
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
    files = _phenomenon_files(path)
    rows = [row for file, split in files for row in _read_rows(file, split)]
    scheme = label_scheme([r["label"] for r in rows])
    phenomenon = name or (path.parent.name if path.is_file() else path.name)
    frame = make_frame(rows, "class").with_columns(
        pl.Series("idx", [r["idx"] for r in rows], dtype=pl.Int64)
    )
    return Task(
        name=f"curriculum/{phenomenon}",
        frame=frame,
        target_type="class",
        labels=SCHEMES[scheme],
        phenomenon=phenomenon,
        phenomenon_type=PHENOMENON_TYPES.get(phenomenon, ""),
        metadata={"label_scheme": scheme, "source": str(path), "evaluation_split": "val"},
    )


def read_all(root: str | Path, phenomena: Sequence[str] | None = None) -> dict[str, Task]:
    """Every phenomenon folder under `root` (or the named ones), by phenomenon name."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a folder; give the curriculum_nli data folder")
    available = sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.jsonl")))
    chosen = list(phenomena) if phenomena is not None else available
    unknown = [p for p in chosen if p not in available]
    if unknown:
        raise FileNotFoundError(
            f"phenomena {unknown} are not folders of {root}; choose from {available}"
        )
    if not chosen:
        raise FileNotFoundError(f"{root} holds no phenomenon folders with .jsonl files")
    return {p: read(root / p) for p in chosen}
