"""Where datasets are kept: `data_home=`, else `$LINGPROBE_DATA`, else the user cache folder.

A data folder holds the registry's relative paths (`ud_english_ewt/en_ewt-ud-train.conllu`,
`blimp/<paradigm>.jsonl`, ...), so a folder of one's own copies in that layout, or a mirror of it,
works as a data home too. The default is `platformdirs.user_cache_dir("lingprobe")/datasets`
(`~/.cache/lingprobe/datasets` on Linux; `$LINGPROBE_CACHE/datasets` when that is set). Only
files inside that cache are lingprobe's own (`own_cache`): files in a folder the user named are
never moved or replaced.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlparse

from internals import cache_root
from suites.datasets.errors import DataError

ENV_HOME = "LINGPROBE_DATA"
ENV_MIRROR = "LINGPROBE_DATA_MIRROR"
MIRROR_SCHEMES = ("http", "https", "file")


def user_cache() -> Path:
    """lingprobe's per-user cache folder (`$LINGPROBE_CACHE`, else the platform's)."""
    return cache_root()


def data_home(explicit: str | Path | None = None) -> Path:
    """The data folder: `explicit`, else `$LINGPROBE_DATA`, else `<user cache>/datasets`.

    A setting that names an existing file (not a folder) is refused by name.
    """
    if explicit is not None:
        return _folder(Path(explicit).expanduser(), f"--data / data_home= {str(explicit)!r}")
    if os.environ.get(ENV_HOME):
        value = os.environ[ENV_HOME]
        return _folder(Path(value).expanduser(), f"${ENV_HOME}={value!r}")
    return user_cache() / "datasets"


def _folder(path: Path, setting: str) -> Path:
    if path.exists() and not path.is_dir():
        raise DataError(
            f"{setting} names a file, not a folder; give a folder holding the registry's paths"
            " (e.g. ud_english_ewt/en_ewt-ud-train.conllu), or leave it unset for the cache"
        )
    return path


def own_cache(path: Path) -> bool:
    """True when `path` lies inside lingprobe's own cache folder (files lingprobe may replace)."""
    try:
        path.resolve().relative_to(user_cache().resolve())
    except ValueError:
        return False
    return True


def default_mirror(explicit: str | None = None) -> str | None:
    """The mirror base (URL or folder): `explicit`, else `$LINGPROBE_DATA_MIRROR`, else None.

    Only http(s) URLs, file:// URLs and folder paths are accepted.
    """
    if explicit:
        return check_mirror(explicit, f"--mirror {explicit!r}")
    value = os.environ.get(ENV_MIRROR)
    return check_mirror(value, f"${ENV_MIRROR}={value!r}") if value else None


def check_mirror(mirror: str, setting: str) -> str:
    """`mirror` when lingprobe can read it; else a `DataError` naming `setting`."""
    scheme = urlparse(mirror).scheme
    if scheme in MIRROR_SCHEMES or scheme == "" or len(scheme) == 1:  # a path or a Windows drive
        return mirror
    raise DataError(
        f"{setting}: the {scheme}:// scheme is not supported; give an http:// or https:// URL,"
        " a file:// URL or a folder holding the registry's paths"
    )
