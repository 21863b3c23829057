"""File arguments that are either a local path or a registry reference `DATASET:KEY`."""

from __future__ import annotations

from pathlib import Path

from suites.datasets.errors import DataNotFoundError
from suites.datasets.registry import registry
from suites.datasets.source import DataSource, as_source


def registry_reference(spec: str) -> tuple[str, str] | None:
    """(dataset, key) when `spec` reads `DATASET:KEY` with a registered dataset, else None."""
    name, colon, key = spec.partition(":")
    if colon and key and name in registry():
        return name, key
    return None


def resolve_file(
    spec: str | Path, data: DataSource | str | Path | None = None, *, what: str = "file"
) -> Path:
    """A local path for `spec`: `ud-english-ewt:train` through the registry, or an existing file."""
    reference = registry_reference(str(spec))
    if reference is not None:
        return as_source(data).path(*reference)
    path = Path(spec).expanduser()
    if not path.is_file():
        raise DataNotFoundError(
            f"{what} {str(spec)!r} is not a file; give a path, or a registry reference such as"
            " ud-english-ewt:train (`lingprobe data list` names the datasets)"
        )
    return path
