"""The installed distribution's version (`0+unknown` when run from a bare source tree)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("lingprobe")
except PackageNotFoundError:  # pragma: no cover - only without an install
    __version__ = "0+unknown"
