"""Where lingprobe keeps derived files it can rebuild (dequantised models, parsed vectors)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """`$LINGPROBE_CACHE`, else `$XDG_CACHE_HOME/lingprobe`, else `~/.cache/lingprobe`."""
    if os.environ.get("LINGPROBE_CACHE"):
        return Path(os.environ["LINGPROBE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lingprobe"
