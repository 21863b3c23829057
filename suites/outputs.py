"""Writing results: parquet tables and JSON manifests, atomically, into an output folder."""

from __future__ import annotations

import io
import json
import logging
import re
import time
from pathlib import Path
from typing import Any

import polars as pl

from lingprobe.atomic import atomic_write_bytes
from suites.datasets.errors import DataNotFoundError
from suites.datasets.integrity import trusted_files
from suites.errors import TaskError
from suites.provenance import environment

MANIFEST = "manifest.json"
log = logging.getLogger(__name__)


class ManifestError(TaskError):
    """A results folder's manifest cannot be read."""


def safe_name(text: str) -> str:
    """`text` as a file-name part (other characters become `_`): the one cleaner of the names
    of unit folders and files."""
    return re.sub(r"[^A-Za-z0-9._@=+-]+", "_", text).strip("_") or "_"


def write_table(
    frame: pl.DataFrame, path: str | Path, metadata: dict[str, str] | None = None
) -> Path:
    """Save `frame` as parquet via a temporary file and a rename (never half-written);
    `metadata` goes into the file's key-value metadata (`pl.read_parquet_metadata`)."""
    buffer = io.BytesIO()
    frame.write_parquet(buffer, metadata=metadata)
    target = Path(path)
    atomic_write_bytes(target, buffer.getvalue())
    return target


def write_manifest(
    folder: str | Path, suite: str, *, status: str = "running", **details: Any
) -> Path:
    """`manifest.json`: the suite (so `lingprobe report` knows how to render the folder), the
    run's status and times, this process's provenance (`suites.provenance.environment`: command
    line, versions, commit, device) and `details` (models, data, settings, units), and
    `trusted_local`: the registry files this process used as they are although their sha256
    differs (`--trust-local`), with both hashes.

    Written atomically when a run starts (status "running") and again when it ends
    (`finish_manifest`); a later write for the same suite keeps `started` and the details it
    does not replace, so one manifest covers every task run into the folder.
    """
    target = Path(folder) / MANIFEST
    old = _existing(target, suite)
    now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    payload = {
        **{k: v for k, v in old.items() if k not in ("environment", "finished")},
        "suite": suite,
        "status": status,
        "started": old.get("started", now),
        "updated": now,
        "finished": now if status != "running" else None,
        "environment": environment(),
        **details,
    }
    trusted = trusted_files()  # registry files used as they are (`--trust-local`)
    if trusted:
        payload["trusted_local"] = trusted
    atomic_write_bytes(target, json.dumps(payload, indent=2, default=str).encode())
    return target


def finish_manifest(folder: str | Path, suite: str, status: str = "done", **details: Any) -> Path:
    """Mark the run in `folder` finished (or "failed"), adding `details`."""
    return write_manifest(folder, suite, status=status, **details)


def _existing(target: Path, suite: str) -> dict[str, Any]:
    try:
        old = json.loads(target.read_text())
    except (OSError, ValueError):
        return {}
    return old if isinstance(old, dict) and old.get("suite") == suite else {}


def read_manifest(folder: str | Path) -> dict[str, Any]:
    """The manifest of a results folder, or a clear error when there is none."""
    path = Path(folder) / MANIFEST
    if not path.exists():
        raise DataNotFoundError(
            f"{path} does not exist; point `lingprobe report` at a folder that"
            " `lingprobe run` wrote"
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise ManifestError(f"{path} is not a JSON manifest ({error}); rerun the command") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("suite"), str):
        raise ManifestError(
            f'{path} names no suite (a JSON object with a "suite" string); it was not written by'
            " lingprobe, or was edited: rerun the command that made the folder"
        )
    return manifest


def readable(path: Path) -> bool:
    """True when `path` is a parquet file that reads back; a damaged one is logged and removed."""
    if not path.exists():
        return False
    try:
        pl.read_parquet(path)
    except Exception as error:  # polars raises several kinds for a damaged file
        log.warning("%s is damaged (%s); removed it, so its unit runs again", path, error)
        path.unlink(missing_ok=True)
        return False
    return True
