"""Atomic file writes that respect the umask, and the removal of temporary files left by a crash.

A file is written to a hidden temporary name in its own folder, flushed to disk and renamed over
the target, so a reader sees the old file or the new one, never a part. The temporary name holds
the writer's host and process id, so a later run can tell a dead writer's leftover from a file
another live process is still writing.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import time
from collections.abc import Callable
from pathlib import Path

TMP_SUFFIX = ".tmp"
STALE_AFTER_S = 600.0  # a live writer renames its file within seconds; older ones are leftovers


def temporary_path(path: Path) -> Path:
    """A fresh hidden name next to `path`: `.<name>.<host>.<pid>.<random>.tmp`."""
    host = socket.gethostname().replace(".", "-") or "host"
    return path.with_name(f".{path.name}.{host}.{os.getpid()}.{secrets.token_hex(4)}{TMP_SUFFIX}")


def atomic_write(path: str | os.PathLike[str], write: Callable[[Path], object]) -> None:
    """Let `write(tmp)` fill a temporary file next to `path`, fsync it, and rename it over `path`.

    The temporary file is created with mode 0666 minus the process umask (as `open` would), so
    the result has the permissions the user expects (`tempfile.mkstemp` would give 0600).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    os.close(fd)
    try:
        write(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    sync_folder(target.parent)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to `path` atomically (see `atomic_write`)."""
    atomic_write(path, lambda tmp: tmp.write_bytes(data))


def sync_folder(folder: Path) -> None:
    """fsync a folder so that renames in it survive a power loss (a no-op where unsupported)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def remove_leftovers(folder: Path, now: float | None = None) -> list[Path]:
    """Delete temporary files under `folder` left by writers that died; return what was removed.

    A leftover is a `.*.tmp` file whose writer (same host) is no longer running, or any such
    file older than `STALE_AFTER_S` seconds.
    """
    if not folder.is_dir():
        return []
    now = time.time() if now is None else now
    removed = []
    for tmp in folder.rglob(f".*{TMP_SUFFIX}"):
        if tmp.is_file() and is_leftover(tmp, now):
            tmp.unlink(missing_ok=True)
            removed.append(tmp)
    return removed


def is_leftover(tmp: Path, now: float | None = None) -> bool:
    """Whether the temporary file or folder `tmp` (named by `temporary_path`) was left by a
    writer that died: same host and no longer running, or older than `STALE_AFTER_S`."""
    try:
        age = (time.time() if now is None else now) - tmp.stat().st_mtime
    except FileNotFoundError:
        return False
    host = socket.gethostname().replace(".", "-") or "host"
    parts = tmp.name[: -len(TMP_SUFFIX)].rsplit(".", 3)
    dead = len(parts) == 4 and parts[1] == host and not _running(parts[2])
    return dead or age > STALE_AFTER_S


def _running(pid_text: str) -> bool:
    if not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True
