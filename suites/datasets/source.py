"""`DataSource`: how every suite and reader turns a dataset name and file key into a local path.

A file is taken, in order, from the data home (verified by sha256; a file that does not match is
rejected, removed and fetched again), from the copy shipped inside lingprobe (embedded files are
byte-identical to the registry's), from an archive already in the data home (members are
extracted atomically and verified), or downloaded from the mirror or the canonical URL. With
`samples=True` a dataset that has an embedded sample is replaced by it, so nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import logging
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lingprobe.atomic import atomic_write_bytes
from suites.datasets.download import download, local_mirror
from suites.datasets.embedded import embedded_bytes
from suites.datasets.errors import DataError, DataIntegrityError, UnknownDatasetError
from suites.datasets.home import data_home, default_mirror, user_cache
from suites.datasets.integrity import matches, sha256_of
from suites.datasets.registry import DataFile, Dataset, get_dataset, registry, sample_for

log = logging.getLogger(__name__)
CacheState = Literal["cached", "embedded", "partly cached", "not cached"]
SAMPLES = "samples"  # the `--data` word for "the embedded samples"
FULL = "full"  # the `--data` word for "the full datasets" (the default)


@dataclass(frozen=True)
class DataSource:
    """Where data comes from: a data home, a mirror, and whether to use the embedded samples.

    `home=None` means `$LINGPROBE_DATA`, else the user cache folder; `mirror=None` means
    `$LINGPROBE_DATA_MIRROR`, else each file's canonical URL.
    """

    home: Path | None = None
    mirror: str | None = None
    samples: bool = False
    progress: bool = True

    @property
    def folder(self) -> Path:
        """The data home this source reads and writes."""
        return data_home(self.home)

    def dataset(self, name: str) -> Dataset:
        """The registry entry used for `name` (its embedded sample when `samples=True`)."""
        if self.samples:
            try:
                return sample_for(name)
            except UnknownDatasetError:
                return get_dataset(name)
        return get_dataset(name)

    def path(self, name: str, key: str) -> Path:
        """A verified local path of file `key` of dataset `name` (fetched when needed)."""
        file, archive = self.dataset(name).file(key)
        return self.file_path(file, archive)

    def fetch(self, name: str) -> list[Path]:
        """Every file of dataset `name` (an archive's members, extracted), verified."""
        dataset = self.dataset(name)
        paths = []
        for file in dataset.files:
            if file.members:
                paths += [self.file_path(member, file) for member in file.members]
            else:
                paths.append(self.file_path(file, None))
        return paths

    def state(self, name: str) -> CacheState:
        """Whether the dataset's files are in the data home (by presence; `verify` re-hashes)."""
        dataset = get_dataset(name)
        files = list(_leaves(dataset))
        present = sum((self.folder / f.path).is_file() for f in files)
        if present == len(files):
            return "cached"
        if all(f.embedded for f in files):
            return "embedded"
        return "partly cached" if present else "not cached"

    def verify(self) -> Iterator[tuple[str, Path, bool]]:
        """(dataset, path, intact) for every registry file present in the data home.

        A damaged file is removed, so the next use fetches it again.
        """
        for dataset in registry().values():
            for file in (*dataset.files, *(m for f in dataset.files for m in f.members)):
                path = self.folder / file.path
                if not path.is_file():
                    continue
                intact = sha256_of(path) == file.sha256
                if not intact:
                    path.unlink()
                yield dataset.name, path, intact

    def file_path(self, file: DataFile, archive: DataFile | None = None) -> Path:
        """A verified local path of one registry file entry (or archive member)."""
        home = self.folder
        target = home / file.path
        if target.is_file():
            if matches(target, file.sha256):
                return target
            log.warning(
                "%s does not match the registry's sha256; removed it and fetching it again",
                target,
            )
            target.unlink()
        if file.embedded:
            return self._write(target, embedded_bytes(file), file)
        mirror = default_mirror(self.mirror)
        if archive is not None:
            folder = local_mirror(mirror) if mirror else None
            if folder is not None and (folder / file.path).is_file():
                return download(file, home, mirror, self.progress)
            return self._extract(file, self.file_path(archive, None), target)
        return download(file, home, mirror, self.progress)

    def _extract(self, member: DataFile, archive_path: Path, target: Path) -> Path:
        with zipfile.ZipFile(archive_path) as archive:
            data = archive.read(member.name or member.path)
        return self._write(target, data, member)

    def _write(self, target: Path, data: bytes, file: DataFile) -> Path:
        if hashlib.sha256(data).hexdigest() != file.sha256:
            raise DataIntegrityError(
                f"{file.path} extracted here does not match the registry's sha256; the archive"
                " is damaged: run `lingprobe data verify` and fetch again"
            )
        try:
            atomic_write_bytes(target, data)
        except PermissionError:  # a read-only data home: keep lingprobe's own copy instead
            target = user_cache() / "readonly-fallback" / file.sha256[:16] / file.filename
            if not (target.is_file() and matches(target, file.sha256)):
                atomic_write_bytes(target, data)
        return target


def _leaves(dataset: Dataset) -> Iterator[DataFile]:
    """The files a dataset is used through: archive members instead of their archives."""
    for file in dataset.files:
        yield from (file.members or (file,))


def as_source(data: DataSource | str | Path | None, *, progress: bool = True) -> DataSource:
    """A `DataSource` from what users pass as `data=` / `--data`.

    None or "full": the registry's datasets (data home, then download); "samples": the embedded
    samples (no network); a folder: a data home holding the registry's paths (own copies).
    """
    if isinstance(data, DataSource):
        return data
    if data is None or str(data) == FULL:
        return DataSource(progress=progress)
    if str(data) == SAMPLES:
        return DataSource(samples=True, progress=progress)
    folder = Path(data).expanduser()
    if folder.is_dir():
        return DataSource(home=folder, progress=progress)
    raise DataError(
        f"data={str(data)!r} is neither {FULL!r}, {SAMPLES!r} nor an existing folder; give one of"
        " those (a folder holds the registry's paths, e.g. ud_english_ewt/en_ewt-ud-train.conllu)"
    )
