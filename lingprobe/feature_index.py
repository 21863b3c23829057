"""The index of a feature set: what its shards hold and the checksum each must have.

`featureset.json` (or another name, beside the shards it lists) records the format version, the
shape `[item, site, dim]`, the stored dtype, the site names and the folder of each site's shards,
the shard size in items, the key every shard carries, one checksum per shard, a content key
(one digest of the shape, dtype, site names and every shard's checksum: equal content written
with the same shard size has the same key) and a checksum of the index itself, so an edited or
damaged index is refused when it is opened.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from lingprobe.atomic import atomic_write_bytes
from lingprobe.digest import bytes_digest, combined_digest
from lingprobe.errors import FeatureSetError

FORMAT = "lingprobe-featureset/1"
INDEX = "featureset.json"
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
REWRITE = (
    "write it again (FeatureSet.write), or rerun subject.features(..., store=..., lazy=True),"
    " which recomputes damaged shards and rewrites the index"
)


@dataclass(frozen=True)
class FeatureIndex:
    """What a feature set holds: its shape, dtype, sites and the checksum of every shard."""

    shape: tuple[int, int, int]
    dtype: str
    site_names: tuple[str, ...]
    site_folders: tuple[str, ...]
    shard_size: int
    owner: str  # shards carry the key `<owner>/<site folder>/<shard number>`
    checksums: tuple[tuple[str, ...], ...]  # [site][shard]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def shards(self) -> int:
        """Shards per site."""
        return math.ceil(self.shape[0] / self.shard_size)

    @property
    def torch_dtype(self) -> torch.dtype:
        """The stored dtype as a torch dtype."""
        return DTYPES[self.dtype]

    @property
    def content_key(self) -> str:
        """One digest of the shape, dtype, site names and every shard's checksum."""
        head = [("shape", repr(self.shape)), ("dtype", self.dtype)]
        head += [(f"site {k}", name) for k, name in enumerate(self.site_names)]
        shards = [
            (f"{k}/{shard}", checksum)
            for k, row in enumerate(self.checksums)
            for shard, checksum in enumerate(row)
        ]
        return combined_digest([*head, ("shard_size", str(self.shard_size)), *shards])

    def rows(self, shard: int) -> range:
        """The items shard number `shard` holds."""
        start = shard * self.shard_size
        return range(start, min(self.shape[0], start + self.shard_size))

    def shard_key(self, site: int, shard: int) -> str:
        """The key shard `shard` of site number `site` carries."""
        return f"{self.owner}/{self.site_folders[site]}/{shard:06d}"

    def shard_path(self, folder: Path, site: int, shard: int) -> Path:
        """Where shard `shard` of site number `site` lives, under the index's `folder`."""
        return folder / self.site_folders[site] / f"shard-{shard:06d}.safetensors"

    def save(self, path: Path) -> None:
        """Write the index atomically, with its content key and its own checksum."""
        body = asdict(self)
        body = {"format": FORMAT, **body, "content_key": self.content_key}
        text = json.dumps(body, indent=1, sort_keys=True)
        record = {**body, "index_checksum": bytes_digest(text.encode())}
        atomic_write_bytes(path, json.dumps(record, indent=1, sort_keys=True).encode())

    @classmethod
    def load(cls, path: Path) -> FeatureIndex:
        """The index at `path`, checked; `FeatureSetError` naming the file and the fix."""
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise FeatureSetError(
                f"{path} does not exist: no complete feature set is there (one whose writing"
                " was interrupted has no index); write it with FeatureSet.write or"
                " subject.features(..., store=..., lazy=True)"
            ) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise FeatureSetError(f"{path} is not a readable index ({error}); {REWRITE}") from None
        if not isinstance(record, dict) or record.get("format") != FORMAT:
            found = record.get("format") if isinstance(record, dict) else type(record).__name__
            raise FeatureSetError(
                f"{path} has format {found!r}, expected {FORMAT!r}; {REWRITE} with this"
                " version of lingprobe"
            )
        stated = record.pop("index_checksum", None)
        text = json.dumps(record, indent=1, sort_keys=True)
        if stated != bytes_digest(text.encode()):
            raise FeatureSetError(
                f"{path}: the index's checksum does not match its content (edited or damaged"
                f" after it was written); {REWRITE}"
            )
        return cls._checked(path, record)

    @classmethod
    def _checked(cls, path: Path, record: dict[str, Any]) -> FeatureIndex:
        try:
            index = cls(
                shape=tuple(int(n) for n in record["shape"]),  # type: ignore[arg-type]
                dtype=str(record["dtype"]),
                site_names=tuple(str(n) for n in record["site_names"]),
                site_folders=tuple(str(n) for n in record["site_folders"]),
                shard_size=int(record["shard_size"]),
                owner=str(record["owner"]),
                checksums=tuple(tuple(str(c) for c in row) for row in record["checksums"]),
                meta=dict(record.get("meta", {})),
            )
            problem = index.problem()
        except (KeyError, TypeError, ValueError) as error:
            problem = f"a field is missing or malformed ({type(error).__name__}: {error})"
        if problem is None and record.get("content_key") != index.content_key:
            problem = "its content key does not match its shards' checksums"
        if problem is not None:
            raise FeatureSetError(f"{path}: {problem}; {REWRITE}")
        return index

    def problem(self) -> str | None:
        """What is inconsistent in the index, or None."""
        items, sites, dim = self.shape
        if len(self.shape) != 3 or items < 1 or sites < 1 or dim < 1:
            return f"shape {self.shape} is not [item, site, dim] with each at least 1"
        if self.dtype not in DTYPES:
            return f"dtype {self.dtype!r} is not one of {sorted(DTYPES)}"
        if self.shard_size < 1:
            return f"shard_size {self.shard_size} is below 1"
        if len(self.site_names) != sites or len(self.site_folders) != sites:
            return f"{len(self.site_names)} site names for {sites} sites"
        if len(set(self.site_folders)) != sites or any(
            not f or "/" in f or f.startswith(".") for f in self.site_folders
        ):
            return f"site folders {self.site_folders} are not distinct plain names"
        counts = {len(row) for row in self.checksums}
        if len(self.checksums) != sites or counts != {self.shards}:
            return f"shard checksums for {sorted(counts)} shards, expected {self.shards} per site"
        return None
