"""Getting one registry file into a data folder: from a mirror or its canonical URL, verified.

HTTP(S) downloads go through pooch (streamed into a temporary file in the target folder, hash
checked, then renamed, with retries), so a killed or failed download never leaves a file under
the registry's name; the file then gets the permissions of the user's umask (pooch's temporary
file is 0600). A mirror is a base URL, or a local folder, holding the registry's relative
paths. Every failure names the file, the URL and the two ways out; a redirect to another scheme
(`file:///...`) is refused as such.
"""

from __future__ import annotations

import logging
import os
import re
import time
from pathlib import Path
from urllib.parse import urlparse

import pooch
import requests

from lingprobe.atomic import atomic_write_bytes
from suites.datasets.errors import DataIntegrityError, DataNotFoundError
from suites.datasets.home import ENV_HOME, ENV_MIRROR
from suites.datasets.integrity import sha256_of
from suites.datasets.registry import DataFile

log = logging.getLogger(__name__)
RETRIES = 2  # pooch waits 1 s, then 2 s, between attempts
STALE_SECONDS = 3600  # a temporary download older than this was left by a killed process


def local_mirror(mirror: str) -> Path | None:
    """The folder a mirror names (a path or a file:// URL), or None for a remote mirror."""
    parsed = urlparse(mirror)
    if parsed.scheme == "file":
        return Path(parsed.path)
    if parsed.scheme in ("", None) or len(parsed.scheme) == 1:  # a path (or a Windows drive)
        return Path(mirror).expanduser()
    return None


def source_url(file: DataFile, mirror: str | None) -> str | None:
    """Where `file` is downloaded from: the mirror's copy of its path, else its canonical URL."""
    if mirror:
        return f"{mirror.rstrip('/')}/{file.path}"
    return file.url


def ways_out(file: DataFile, home: Path) -> str:
    """The two remedies every download error names."""
    return (
        f"either use a mirror that holds the registry's paths (${ENV_MIRROR} or --mirror URL), or"
        f" put the file at {home / file.path} (a folder of your own copies works too: point"
        f" ${ENV_HOME} or --data at it)"
    )


def download(file: DataFile, home: Path, mirror: str | None, progress: bool) -> Path:
    """Fetch `file` into `home/file.path`, verified; nothing is left there when it fails."""
    target = home / file.path
    created = [p for p in (target.parent, *target.parent.parents) if not p.exists()]
    try:
        folder = local_mirror(mirror) if mirror else None
        if folder is not None:
            _copy(file, folder, target, home)
        else:
            _http(file, target, home, mirror, progress)
    except BaseException:
        for path in created:  # deepest first: remove only the folders this call made
            if path.is_dir() and not any(path.iterdir()):
                path.rmdir()
        raise
    return target


def _copy(file: DataFile, folder: Path, target: Path, home: Path) -> None:
    source = folder / file.path
    if not source.is_file():
        raise DataNotFoundError(
            f"the mirror folder {folder} has no {file.path}; {ways_out(file, home)}"
        )
    if sha256_of(source) != file.sha256:
        raise DataIntegrityError(
            f"{source} (mirror copy of {file.path}) does not match the registry's sha256"
            f" {file.sha256[:16]}...; replace it with the file from {file.url}"
        )
    atomic_write_bytes(target, source.read_bytes())


def _http(file: DataFile, target: Path, home: Path, mirror: str | None, progress: bool) -> None:
    url = source_url(file, mirror)
    if url is None:
        raise DataNotFoundError(
            f"{file.path} ships only with lingprobe and has no download URL; reinstall lingprobe"
        )
    _remove_stale_downloads(target.parent)
    fetcher = pooch.create(
        path=home,
        base_url="",
        registry={file.path: f"sha256:{file.sha256}"},
        urls={file.path: url},
        retry_if_failed=RETRIES,
    )
    try:
        fetcher.fetch(file.path, progressbar=progress)
    except requests.exceptions.InvalidSchema as error:  # also a ValueError: caught first
        where = re.search(r"'([^']*)'", str(error))
        to = where.group(1) if where else str(error)
        local = " to a local file" if to.lower().startswith("file:") else ""
        raise DataNotFoundError(
            f"the download of {file.path} from {url} was redirected{local} ({to}), which is"
            f" refused: lingprobe follows redirects to http(s) URLs only; {ways_out(file, home)}"
        ) from None
    except ValueError as error:  # pooch: the downloaded bytes have another hash
        raise DataIntegrityError(
            f"the download of {file.path} from {url} does not match the registry's sha256"
            f" {file.sha256[:16]}... and was rejected (nothing was kept); the server or mirror"
            f" serves other bytes: {ways_out(file, home)}"
        ) from error
    except requests.RequestException as error:
        reason = type(error).__name__
        status = getattr(getattr(error, "response", None), "status_code", None)
        if status is not None:
            reason = f"HTTP {status}"
        raise DataNotFoundError(
            f"cannot download {file.path} from {url} ({reason}); {ways_out(file, home)}"
        ) from error
    respect_umask(target)


def respect_umask(path: Path) -> None:
    """Give a downloaded file mode 0666 minus the umask, as `open` would (pooch leaves 0600)."""
    os.chmod(path, 0o666 & ~current_umask())


def current_umask() -> int:
    """This process's umask (read from /proc where it can be, so no other thread sees it
    change; else set and restored at once)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _remove_stale_downloads(folder: Path) -> None:
    """Delete pooch temporaries (`tmp*`) that a killed download left behind long ago."""
    if not folder.is_dir():
        return
    now = time.time()
    for leftover in folder.glob("tmp*"):
        stale = now - leftover.stat().st_mtime > STALE_SECONDS
        if leftover.is_file() and "." not in leftover.name and stale:
            log.info("removing %s, left by an interrupted download", leftover)
            leftover.unlink(missing_ok=True)
