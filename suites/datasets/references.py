"""File arguments that are either a local path or a registry reference `DATASET:KEY`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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


def absolute_files(values: dict[str, Any], keys: Sequence[str], base: Path) -> dict[str, Any]:
    """A sweep table's file values (`keys`) with paths relative to its config file (`base`) made
    absolute; registry references stay as they are. A missing file is refused by name."""
    values = dict(values)
    for key in keys:
        if key not in values or registry_reference(str(values[key])) is not None:
            continue
        path = Path(str(values[key])).expanduser()
        path = path if path.is_absolute() else (base / path).resolve()
        if not path.exists():
            raise DataNotFoundError(
                f"{key} = {values[key]!r}: {path} does not exist; give an existing file or a"
                " registry reference such as ud-english-ewt:train"
            )
        values[key] = str(path)
    return values


def dataset_label(spec: str | Path) -> str:
    """What a file is called in task names: its registry dataset (`ud-english-ewt`, samples
    named as the full data) or the file's stem."""
    reference = registry_reference(str(spec))
    if reference is None:
        return Path(spec).stem
    return reference[0].removesuffix("-sample")


DATA_HELP = (
    "full (the registry's datasets, fetched once; the default), samples (the shipped samples,"
    " no network) or a folder holding the registry's paths"
)
TRUST_LOCAL_HELP = (
    "use a file of the data folder whose sha256 differs from the registry's as it is (the run's"
    " manifest records it) instead of stopping"
)


def add_data_option(parser: argparse.ArgumentParser) -> None:
    """`--data full|samples|FOLDER` and `--trust-local`, as every suite reading registry files
    takes them."""
    parser.add_argument("--data", default=None, help=DATA_HELP)
    add_trust_local_option(parser)


def add_trust_local_option(parser: argparse.ArgumentParser) -> None:
    """`--trust-local` (`DataSource.trust_local`)."""
    parser.add_argument("--trust-local", action="store_true", help=TRUST_LOCAL_HELP)


def data_source(args: argparse.Namespace) -> DataSource:
    """The `DataSource` of a command's `--data`, `--trust-local` and `--quiet`."""
    return as_source(
        args.data,
        progress=not getattr(args, "quiet", False),
        trust_local=getattr(args, "trust_local", False),
    )
