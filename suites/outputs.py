"""Writing results: parquet tables and JSON manifests, atomically, into an output folder."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import polars as pl

from lingprobe.atomic import atomic_write_bytes
from suites.datasets.errors import DataNotFoundError

MANIFEST = "manifest.json"


def write_table(frame: pl.DataFrame, path: str | Path) -> Path:
    """Save `frame` as parquet via a temporary file and a rename (never half-written)."""
    buffer = io.BytesIO()
    frame.write_parquet(buffer)
    target = Path(path)
    atomic_write_bytes(target, buffer.getvalue())
    return target


def write_manifest(folder: str | Path, suite: str, **details: Any) -> Path:
    """`manifest.json` naming the suite (so `lingprobe report` knows how to render the folder)."""
    target = Path(folder) / MANIFEST
    payload = json.dumps({"suite": suite, **details}, indent=2, default=str)
    atomic_write_bytes(target, payload.encode())
    return target


def read_manifest(folder: str | Path) -> dict[str, Any]:
    """The manifest of a results folder, or a clear error when there is none."""
    path = Path(folder) / MANIFEST
    if not path.exists():
        raise DataNotFoundError(
            f"{path} does not exist; point `lingprobe report` at a folder that"
            " `lingprobe run` wrote"
        )
    return json.loads(path.read_text())
