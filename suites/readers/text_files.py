"""Reading data files as UTF-8 text, with an error that names the file, line and byte when a
file is in another encoding (a raw UnicodeDecodeError names neither), and where a CSV file
stops being well formed."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import polars as pl

from lingprobe.errors import LingprobeError
from suites.errors import TaskError


def read_utf8(path: str | Path) -> str:
    """The file's text (a leading byte-order mark dropped, CRLF read as LF); `TaskError` naming
    the file, line and offending byte when it is not UTF-8."""
    source = Path(path)
    data = source.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        bad = data[error.start : error.start + 1]
        raise TaskError(
            f"{source}:{line}: not UTF-8 text (byte {bad!r} at offset {error.start}); re-save the"
            " file as UTF-8, e.g. `iconv -f latin1 -t utf-8 FILE > FILE.utf8`"
        ) from None
    return text.replace("\r\n", "\n")


def utf8_lines(path: str | Path) -> list[str]:
    """The file's lines (see `read_utf8`), without line ends."""
    lines = read_utf8(path).split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def csv_problem(path: str | Path, text: str, delimiter: str = ",") -> str | None:
    """Where CSV `text` (of file `path`) stops being well formed, as one line naming the file and
    the line its bad record starts on: a quote that is never closed, or a record whose field
    count differs from the header's. None when the csv module reads it all."""
    reader = csv.reader(io.StringIO(text), delimiter=delimiter, strict=True)
    header: list[str] | None = None
    start = 1  # the line the next record starts on
    try:
        for record in reader:
            if header is None:
                header = record
            elif record and len(record) != len(header):
                return (
                    f"{path}:{start}: {len(record)} fields where the header has {len(header)}"
                    f" ({', '.join(header)[:200]}); quote fields that contain {delimiter!r}"
                )
            start = reader.line_num + 1
    except csv.Error as error:
        if "end of data" in str(error):
            return (
                f"{path}:{start}: a quote opened in the record starting on this line is never"
                ' closed; close it, or double the quotes inside a quoted field ("")'
            )
        if reader.line_num > start:
            return (
                f"{path}:{start}: a quoted field opened in the record starting on this line runs"
                f" on to line {reader.line_num} ({error}); close the quote where the field ends"
            )
        return f"{path}:{start}: not well-formed CSV ({error}); check its quoting"
    return None


def read_csv_frame(
    path: str | Path,
    *,
    separator: str = ",",
    error: type[LingprobeError] = TaskError,
    quote_char: str | None = '"',
) -> pl.DataFrame:
    """A CSV/TSV file as a polars frame of strings (`quote_char=None`: no quoting); `error`
    naming the file and line when it is not UTF-8 or not well-formed CSV."""
    text = read_utf8(path)
    try:
        return pl.read_csv(
            text.encode(), separator=separator, infer_schema=False, quote_char=quote_char
        )
    except pl.exceptions.PolarsError as failure:
        problem = csv_problem(path, text, separator) if quote_char else None
        if problem is None:
            first = (str(failure).strip().splitlines() or [type(failure).__name__])[0]
            problem = f"{path}: not a well-formed CSV ({first[:200]}); check its quoting"
        raise error(problem) from None
