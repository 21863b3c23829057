"""Exception types of sweeps: each names the bad key or value and the fix."""

from __future__ import annotations

from lingprobe.errors import LingprobeError


class SweepConfigError(LingprobeError, ValueError):
    """A sweep config file is malformed: the message names the file, the key and the fix."""


class SweepError(LingprobeError, RuntimeError):
    """A sweep cannot start or continue (e.g. the Ray executor without Ray installed)."""
