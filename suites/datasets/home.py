"""Where datasets are kept: `data_home=`, else `$LINGPROBE_DATA`, else the user cache folder.

A data folder holds the registry's relative paths (`ud_english_ewt/en_ewt-ud-train.conllu`,
`blimp/<paradigm>.jsonl`, ...), so a folder of one's own copies in that layout, or a mirror of it,
works as a data home too. The default is `platformdirs.user_cache_dir("lingprobe")/datasets`
(`~/.cache/lingprobe/datasets` on Linux; `$LINGPROBE_CACHE/datasets` when that is set).
"""

from __future__ import annotations

import os
from pathlib import Path

from internals.cache_dir import cache_root

ENV_HOME = "LINGPROBE_DATA"
ENV_MIRROR = "LINGPROBE_DATA_MIRROR"


def user_cache() -> Path:
    """lingprobe's per-user cache folder (`$LINGPROBE_CACHE`, else the platform's)."""
    return cache_root()


def data_home(explicit: str | Path | None = None) -> Path:
    """The data folder: `explicit`, else `$LINGPROBE_DATA`, else `<user cache>/datasets`."""
    if explicit is not None:
        return Path(explicit).expanduser()
    if os.environ.get(ENV_HOME):
        return Path(os.environ[ENV_HOME]).expanduser()
    return user_cache() / "datasets"


def default_mirror(explicit: str | None = None) -> str | None:
    """The mirror base (URL or folder): `explicit`, else `$LINGPROBE_DATA_MIRROR`, else None."""
    return explicit or os.environ.get(ENV_MIRROR) or None
