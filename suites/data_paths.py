"""Finding the shared data folder (`../shared/data` next to a checkout, or where the user says)."""

from __future__ import annotations

import os
from pathlib import Path

from lingprobe.errors import LingprobeError


class DataNotFoundError(LingprobeError, FileNotFoundError):
    """The data folder or a file in it is missing."""


def shared_data(explicit: str | Path | None = None) -> Path:
    """`explicit`, else `$LINGPROBE_DATA`, else `../shared/data` relative to the checkout or cwd."""
    candidates = []
    if explicit is not None:
        candidates.append(Path(explicit))
    elif os.environ.get("LINGPROBE_DATA"):
        candidates.append(Path(os.environ["LINGPROBE_DATA"]))
    else:
        checkout = Path(__file__).resolve().parents[1]
        candidates += [
            checkout.parent / "shared" / "data",
            Path.cwd().parent / "shared" / "data",
            Path.cwd() / "shared" / "data",
        ]
    for path in candidates:
        if path.is_dir():
            return path
    raise DataNotFoundError(
        f"no data folder at {', '.join(str(c) for c in candidates)}; pass --data DIR or set"
        " LINGPROBE_DATA to the folder holding ud_english_ewt/, blimp/, ..."
    )


def data_file(root: Path, *parts: str) -> Path:
    """A file under the data folder, or a clear error naming it."""
    path = root.joinpath(*parts)
    if not path.exists():
        raise DataNotFoundError(f"{path} does not exist; check --data (now {root})")
    return path
