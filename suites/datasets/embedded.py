"""The files shipped inside lingprobe: in `embedded/`, xz-compressed (licence texts plain)."""

from __future__ import annotations

import hashlib
import lzma
from importlib import resources
from importlib.abc import Traversable

from suites.datasets.errors import DataIntegrityError
from suites.datasets.registry import DataFile

FOLDER = "embedded"


def packaged(file: DataFile) -> Traversable:
    """The copy of `file` inside the package: `<path>.xz`, or `<path>` for plain texts."""
    folder = resources.files("suites.datasets").joinpath(FOLDER)
    compressed = folder.joinpath(*f"{file.path}.xz".split("/"))
    return compressed if compressed.is_file() else folder.joinpath(*file.path.split("/"))


def embedded_bytes(file: DataFile) -> bytes:
    """The shipped file's bytes, checked against the registry's sha256."""
    copy = packaged(file)
    data = copy.read_bytes()
    if copy.name.endswith(".xz"):
        data = lzma.decompress(data)
    if hashlib.sha256(data).hexdigest() != file.sha256:
        raise DataIntegrityError(
            f"lingprobe's shipped copy of {file.path} does not match its sha256; the installation"
            " is damaged: reinstall lingprobe"
        )
    return data
