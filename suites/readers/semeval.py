"""SemEval-2010 Task 8: `<e1>`/`<e2>` marked nominals and their directed relation."""

from __future__ import annotations

import re
from pathlib import Path

from suites.datasets.errors import DataNotFoundError
from suites.readers.text_files import utf8_lines
from suites.tasks import Task, TaskError, make_frame

TAG = re.compile(r"</?e[12]>")


def _untag(marked: str, path: Path, line: int) -> tuple[str, list[tuple[int, int]]]:
    text: list[str] = []
    spans: dict[str, tuple[int, int]] = {}
    open_at: dict[str, int] = {}
    cursor = 0
    position = 0
    for match in TAG.finditer(marked):
        chunk = marked[cursor : match.start()]
        text.append(chunk)
        position += len(chunk)
        tag = match.group()
        if tag.startswith("</"):
            spans[tag[2:4]] = (open_at.pop(tag[2:4], -1), position)
        else:
            open_at[tag[1:3]] = position
        cursor = match.end()
    text.append(marked[cursor:])
    if set(spans) != {"e1", "e2"} or any(s < 0 for s, _ in spans.values()) or open_at:
        raise TaskError(f"{path}:{line}: needs one <e1>..</e1> and one <e2>..</e2> pair")
    return "".join(text), [spans["e1"], spans["e2"]]


def read_semeval(path: str | Path, *, split: str | None = None) -> Task:
    """Relation classification with direction (e.g. `Cause-Effect(e2,e1)`), spans (e1, e2)."""
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"{path}: no such SemEval-2010 Task 8 file")
    which = split or ("test" if "test" in path.name.lower() else "train")
    lines = utf8_lines(path)
    rows = []
    number = 0
    while number < len(lines):
        line = lines[number]
        if not line.strip():
            number += 1
            continue
        if "\t" not in line or number + 1 >= len(lines):
            raise TaskError(
                f'{path}:{number + 1}: expected `id<TAB>"sentence"` followed by a relation line'
            )
        marked = line.split("\t", 1)[1].strip().strip('"')
        text, spans = _untag(marked, path, number + 1)
        label = lines[number + 1].strip()
        if not label:
            raise TaskError(f"{path}:{number + 2}: empty relation label")
        rows.append({"text": text, "spans": spans, "label": label, "split": which})
        number += 2
        while number < len(lines) and lines[number].startswith("Comment"):
            number += 1
    return Task(
        f"semeval2010:{which}",
        make_frame(rows, "classification"),
        "classification",
        phenomenon="relation classification",
        phenomenon_type="semantics",
        metadata={"source": str(path)},
    )
