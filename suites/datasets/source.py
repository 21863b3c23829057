"""`DataSource`: how every suite and reader turns a dataset name and file key into a local path.

A file is taken, in order, from the data home (verified by sha256), from the copy shipped inside
lingprobe (embedded files are byte-identical to the registry's), from an archive already in the
data home (members are extracted atomically and verified), or downloaded from the mirror or the
canonical URL. With `samples=True` a dataset that has an embedded sample is replaced by it, so
nothing is downloaded.

A file in the data home that does not match the registry is never deleted. In a folder the user
named (`data_home=`, `--data`, `$LINGPROBE_DATA`) it is left as it is and the run stops, naming
the file and both ways out: move it away to fetch the registry's copy, or use it as it is with
`trust_local=True` (`--trust-local`), which the run's manifest records. Only a file inside
lingprobe's own cache is replaced, and its bad copy is first moved aside (`NAME.corrupt-<time>`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from lingprobe.atomic import atomic_write_bytes
from suites.datasets.download import download, local_mirror
from suites.datasets.embedded import embedded_bytes
from suites.datasets.errors import DataError, DataIntegrityError, UnknownDatasetError
from suites.datasets.home import check_mirror, data_home, default_mirror, own_cache, user_cache
from suites.datasets.integrity import matches, sha256_of, trust
from suites.datasets.registry import DataFile, Dataset, get_dataset, registry, sample_for

log = logging.getLogger(__name__)
CacheState = Literal["cached", "embedded", "partly cached", "not cached"]
SAMPLES = "samples"  # the `--data` word for "the embedded samples"
FULL = "full"  # the `--data` word for "the full datasets" (the default)


@dataclass(frozen=True)
class DataSource:
    """Where data comes from: a data home, a mirror, and whether to use the embedded samples.

    `home=None` means `$LINGPROBE_DATA`, else the user cache folder; `mirror=None` means
    `$LINGPROBE_DATA_MIRROR`, else each file's canonical URL. `trust_local=True` uses a file of
    the data home whose sha256 differs from the registry's as it is (logged, and listed in the
    run's manifest) instead of stopping.
    """

    home: Path | None = None
    mirror: str | None = None
    samples: bool = False
    progress: bool = True
    trust_local: bool = False

    def __post_init__(self) -> None:
        if self.mirror:  # refused at once, not at the first download
            check_mirror(self.mirror, f"--mirror {self.mirror!r}")

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

        A damaged file inside lingprobe's own cache is moved aside (`set_aside`), so the next
        use fetches it again; one in a folder the user named is left as it is.
        """
        for dataset in registry().values():
            for file in (*dataset.files, *(m for f in dataset.files for m in f.members)):
                path = self.folder / file.path
                if not path.is_file():
                    continue
                intact = sha256_of(path) == file.sha256
                if not intact and own_cache(path):
                    set_aside(path)
                yield dataset.name, path, intact

    def file_path(self, file: DataFile, archive: DataFile | None = None) -> Path:
        """A verified local path of one registry file entry (or archive member)."""
        home = self.folder
        target = home / file.path
        if target.is_file() and (matches(target, file.sha256) or self._kept(target, file)):
            return target
        if file.embedded:
            return self._write(target, embedded_bytes(file), file)
        mirror = default_mirror(self.mirror)
        if archive is not None:
            folder = local_mirror(mirror) if mirror else None
            if folder is not None and (folder / file.path).is_file():
                return download(file, home, mirror, self.progress)
            return self._extract(file, self.file_path(archive, None), target)
        return download(file, home, mirror, self.progress)

    def _kept(self, target: Path, file: DataFile) -> bool:
        """Whether to use `target`, which differs from the registry: True under `trust_local`;
        a refusal in a folder the user named; False (moved aside) in lingprobe's own cache."""
        if self.trust_local:
            trust(target, file.path, file.sha256)
            log.warning(
                "%s does not match the registry's sha256 %s...; used as it is (trust_local),"
                " recorded in the run's manifest",
                target,
                file.sha256[:16],
            )
            return True
        if not own_cache(target):
            raise DataIntegrityError(
                f"{target} does not match the registry's sha256 {file.sha256[:16]}... for"
                f" {file.path}; it was left as it is: move it away to fetch the registry's copy,"
                " or use it as it is with --trust-local (trust_local=True, `trust_local = true`"
                " in a sweep's [sweep] table), which the run's manifest records"
            )
        aside = set_aside(target)
        log.warning(
            "%s does not match the registry's sha256; moved it to %s and fetching it again",
            target,
            aside.name,
        )
        return False

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


def set_aside(path: Path) -> Path:
    """Move a damaged file of lingprobe's cache to `NAME.corrupt-<UTC time>` beside it (never
    deleted: the user may want to look at it); returns the new path."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    count = 1
    while aside.exists():
        count += 1
        aside = path.with_name(f"{path.name}.corrupt-{stamp}-{count}")
    os.replace(path, aside)
    return aside


def _leaves(dataset: Dataset) -> Iterator[DataFile]:
    """The files a dataset is used through: archive members instead of their archives."""
    for file in dataset.files:
        yield from (file.members or (file,))


def as_source(
    data: DataSource | str | Path | None, *, progress: bool = True, trust_local: bool = False
) -> DataSource:
    """A `DataSource` from what users pass as `data=` / `--data` (and `--trust-local`).

    None or "full": the registry's datasets (data home, then download); "samples": the embedded
    samples (no network); a folder: a data home holding the registry's paths (own copies).
    """
    if isinstance(data, DataSource):
        return replace(data, trust_local=True) if trust_local else data
    if data is None or str(data) == FULL:
        return DataSource(progress=progress, trust_local=trust_local)
    if str(data) == SAMPLES:
        return DataSource(samples=True, progress=progress, trust_local=trust_local)
    folder = Path(data).expanduser()
    if folder.is_dir():
        return DataSource(home=folder, progress=progress, trust_local=trust_local)
    raise DataError(
        f"data={str(data)!r} is neither {FULL!r}, {SAMPLES!r} nor an existing folder; give one of"
        " those (a folder holds the registry's paths, e.g. ud_english_ewt/en_ewt-ud-train.conllu)"
    )
