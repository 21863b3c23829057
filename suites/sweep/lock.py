"""One sweep at a time per output folder: a lock file naming its holder, with a stale rule.

`OUT/.sweep.lock` holds the host, pid and start time of the sweep writing the folder. A second
sweep on the folder is refused with a message naming the holder. A lock whose holder process no
longer runs on this host is stale and taken over (with a log line); a lock from another host is
never broken automatically: the message says how to remove it once that sweep is gone.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from suites.sweep.errors import SweepError

log = logging.getLogger(__name__)
LOCK = ".sweep.lock"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _holder(path: Path) -> dict:
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


@contextmanager
def sweep_lock(out: Path) -> Iterator[None]:
    """Hold `out`'s lock for the duration of the block (see the module doc)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK
    me = {"host": socket.gethostname(), "pid": os.getpid(), "started": time.strftime("%c")}
    for _ in range(2):
        try:
            descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = _holder(path)
            same_host = holder.get("host") == me["host"]
            pid = int(holder.get("pid", 0) or 0)
            if holder and same_host and pid > 0 and not _alive(pid):
                log.warning("%s: taking over a stale lock of pid %s (no longer running)", out, pid)
                path.unlink(missing_ok=True)
                continue
            raise SweepError(
                f"{out} is being written by another sweep (pid {holder.get('pid', '?')} on"
                f" {holder.get('host', '?')}, since {holder.get('started', '?')}); wait for it to"
                f" end, or delete {path} if that sweep is no longer running"
            ) from None
        with os.fdopen(descriptor, "w") as handle:
            json.dump(me, handle)
        break
    try:
        yield
    finally:
        if _holder(path).get("pid") == me["pid"]:
            path.unlink(missing_ok=True)
