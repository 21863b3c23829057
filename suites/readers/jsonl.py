"""Reading JSON-lines data files with errors that name the file, the line and the fix."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from suites.readers.text_files import utf8_lines
from suites.tasks import TaskError


def read_jsonl(path: Path, required: Sequence[str], what: str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, record) of every non-empty line; each record must have `required` fields.

    `what` names a record in messages, e.g. "a BLiMP line".
    """
    records = []
    for number, line in enumerate(utf8_lines(path), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise TaskError(f"{path}:{number}: not valid JSON ({error.msg})") from error
        if not isinstance(record, dict):
            raise TaskError(f"{path}:{number}: not a JSON object; {what} is one object")
        missing = [f for f in required if not str(record.get(f, "")).strip()]
        if missing:
            raise TaskError(
                f"{path}:{number}: {missing} missing or empty; {what} needs {', '.join(required)}"
            )
        wrong = {f: record[f] for f in required if not isinstance(record[f], str)}
        if wrong:
            name, value = next(iter(wrong.items()))
            raise TaskError(
                f"{path}:{number}: field {name!r} is {type(value).__name__} {value!r:.40}; in"
                f" {what} the fields {', '.join(required)} are strings"
            )
        records.append((number, record))
    if not records:
        raise TaskError(f"{path} holds no records; check the file")
    return records
