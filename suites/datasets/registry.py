"""The dataset registry: every dataset lingprobe reads, with pinned URLs, hashes and licences.

Entries come from `registry.toml` next to this module. A `Dataset` has `DataFile`s, each with a
short `key` (`train`, `dev`, a BLiMP paradigm, a curriculum task), the relative `path` it has in
a data folder, its canonical URL (pinned to a commit), sha256 and size. An archive lists its
extracted `members`, which are addressed by keys such as `boolean/train`. Datasets with
`sample_of` are the small samples shipped inside the package (`embedded` files).
"""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from suites.datasets.errors import UnknownDatasetError


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset: where it lives in a data folder, where it comes from, its hash."""

    key: str
    path: str  # relative path inside a data folder, e.g. "blimp/adjunct_island.jsonl"
    sha256: str
    size: int
    url: str | None = None  # canonical, pinned; None for files only lingprobe ships
    embedded: bool = False  # shipped compressed inside the package
    members: tuple[DataFile, ...] = ()  # for archives: the files extracted from it
    name: str | None = None  # an archive member's name inside its archive

    @property
    def filename(self) -> str:
        """The last part of `path`."""
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class Dataset:
    """A registered dataset: description, licence, citation, source and files."""

    name: str
    description: str
    licence: str
    licence_url: str
    citation: str
    source: str
    files: tuple[DataFile, ...]
    sample_of: str | None = None

    @property
    def size(self) -> int:
        """Bytes of every file (archives counted once, not their members)."""
        return sum(f.size for f in self.files)

    @property
    def embedded(self) -> bool:
        """True when every file (or every member) ships inside lingprobe."""
        return all(
            f.embedded or (f.members and all(m.embedded for m in f.members)) for f in self.files
        )

    def keys(self) -> list[str]:
        """Every key a file or archive member can be asked for by."""
        return [k for f in self.files for k in (f.key, *(m.key for m in f.members))]

    def file(self, key: str) -> tuple[DataFile, DataFile | None]:
        """(the file, its archive or None) for `key`; a clear error naming the keys that exist."""
        for entry in self.files:
            if entry.key == key:
                return entry, None
            for member in entry.members:
                if member.key == key:
                    return member, entry
        raise UnknownDatasetError(
            f"dataset {self.name!r} has no file {key!r}{_suggest(key, self.keys())}; its files:"
            f" {', '.join(self.keys()[:12])}{' ...' if len(self.keys()) > 12 else ''}"
        )


def _suggest(name: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(name, choices, n=3, cutoff=0.6)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


def _data_file(entry: dict[str, Any]) -> DataFile:
    members = tuple(_data_file(m) for m in entry.get("members", ()))
    return DataFile(
        key=entry["key"],
        path=entry["path"],
        sha256=entry["sha256"],
        size=int(entry["size"]),
        url=entry.get("url"),
        embedded=bool(entry.get("embedded", False)),
        members=members,
        name=entry.get("name"),
    )


@cache
def registry() -> dict[str, Dataset]:
    """Every registered dataset by name, in registry order."""
    text = resources.files("suites.datasets").joinpath("registry.toml").read_text("utf-8")
    table = tomllib.loads(text)
    return {
        name: Dataset(
            name=name,
            description=entry["description"],
            licence=entry["licence"],
            licence_url=entry.get("licence_url", ""),
            citation=entry["citation"],
            source=entry["source"],
            files=tuple(_data_file(f) for f in entry["files"]),
            sample_of=entry.get("sample_of"),
        )
        for name, entry in table.items()
    }


def get_dataset(name: str) -> Dataset:
    """The registered dataset `name`, or an error listing the names (and the closest ones)."""
    datasets = registry()
    if name in datasets:
        return datasets[name]
    raise UnknownDatasetError(
        f"no dataset named {name!r}{_suggest(name, list(datasets))}; `lingprobe data list`"
        f" shows them all ({', '.join(datasets)})"
    )


def sample_for(name: str) -> Dataset:
    """The embedded sample of dataset `name` (the dataset itself when it is embedded whole)."""
    dataset = get_dataset(name)
    if dataset.sample_of is not None or dataset.embedded:
        return dataset
    for candidate in registry().values():
        if candidate.sample_of == name:
            return candidate
    raise UnknownDatasetError(
        f"dataset {name!r} has no embedded sample; fetch it with `lingprobe data fetch {name}`"
    )
