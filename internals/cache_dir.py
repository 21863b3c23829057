"""Where lingprobe keeps files it can rebuild or re-fetch (dequantised models, parsed vectors,
datasets): `$LINGPROBE_CACHE`, else the platform's user cache folder (via platformdirs;
`~/.cache/lingprobe` on Linux, honouring `$XDG_CACHE_HOME`)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def cache_root() -> Path:
    """`$LINGPROBE_CACHE`, else `platformdirs.user_cache_dir("lingprobe")`."""
    if os.environ.get("LINGPROBE_CACHE"):
        return Path(os.environ["LINGPROBE_CACHE"]).expanduser()
    return Path(platformdirs.user_cache_dir("lingprobe", appauthor=False))
