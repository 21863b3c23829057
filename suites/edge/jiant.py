"""jiant edge-probing JSON lines: whitespace tokens, `span1`/`span2` token ranges, labels."""

from __future__ import annotations

import json
from pathlib import Path

from suites.datasets.errors import DataNotFoundError
from suites.readers.text_files import utf8_lines
from suites.tasks import TargetType, Task, TaskError, make_frame


def _char_offsets(text: str) -> list[tuple[int, int]]:
    offsets, cursor = [], 0
    for token in text.split(" "):
        if token:
            offsets.append((cursor, cursor + len(token)))
        cursor += len(token) + 1
    return offsets


def _span(tokens: list[tuple[int, int]], span: list[int], path: Path, line: int) -> tuple[int, int]:
    start, end = span
    if not 0 <= start < end <= len(tokens):
        raise TaskError(
            f"{path}:{line}: span {span} is outside the {len(tokens)} tokens; jiant spans are"
            " [start, end) token indices with end exclusive"
        )
    return tokens[start][0], tokens[end - 1][1]


def read_jiant(path: str | Path, *, split: str | None = None, name: str | None = None) -> Task:
    """A task from jiant edge-probing JSON lines; list labels make it multi-label."""
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"{path}: no such jiant JSON-lines file")
    rows, multilabel = [], None
    for number, line in enumerate(utf8_lines(path), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            text, targets = record["text"], record["targets"]
        except (json.JSONDecodeError, KeyError) as error:
            raise TaskError(
                f"{path}:{number}: not a jiant record with text and targets ({error})"
            ) from error
        which = split or record.get("info", {}).get("split", "train")
        which = {"val": "dev", "validation": "dev"}.get(which, which)
        tokens = _char_offsets(text)
        for target in targets:
            label = target.get("label")
            is_list = isinstance(label, list)
            if multilabel is None:
                multilabel = is_list
            elif multilabel != is_list:
                raise TaskError(f"{path}:{number}: mixes list and string labels; use one form")
            spans = [_span(tokens, target["span1"], path, number)]
            if "span2" in target:
                spans.append(_span(tokens, target["span2"], path, number))
            rows.append(
                {
                    "text": text,
                    "spans": spans,
                    "split": which,
                    "label": sorted(label) if is_list else str(label),
                }
            )
    kind: TargetType = "multilabel" if multilabel else "classification"
    return Task(name or path.stem, make_frame(rows, kind), kind, metadata={"source": str(path)})
