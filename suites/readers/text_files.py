"""Reading data files as UTF-8 text, with an error that names the file, line and byte when a
file is in another encoding (a raw UnicodeDecodeError names neither)."""

from __future__ import annotations

from pathlib import Path

from suites.tasks import TaskError


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
