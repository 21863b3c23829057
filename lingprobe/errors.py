"""The root of lingprobe's exceptions: catch `LingprobeError` to catch every deliberate error."""

from __future__ import annotations


class LingprobeError(Exception):
    """Base class of every error lingprobe raises on purpose; the message names the fix.

    Every package's errors derive from it (`internals.ItemError`, `probes.ProbeInputError`,
    `suites.tasks.TaskError`, ...), so a script or the CLI can tell a refused input from a bug.
    """


class DeviceError(LingprobeError, ValueError):
    """A requested torch device does not exist or cannot be used on this machine."""


class FeatureSetError(LingprobeError, ValueError):
    """A feature set on disk cannot be used as it is (damaged, incomplete, from another version),
    or was asked for something it cannot give; the message names the file or value and the fix."""


class FeatureSetIndexError(FeatureSetError, IndexError):
    """An item or site index outside a feature set's shape."""
