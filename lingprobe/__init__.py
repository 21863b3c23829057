"""lingprobe's base: the version, the root of every error the library raises on purpose, and the
small pieces `internals` and `probes` share without importing each other: atomic writes
(`lingprobe.atomic`), content digests (`lingprobe.digest`) and device checks (`lingprobe.devices`).

The three packages users import sit on top of this one: `internals` (features), `probes`
(results) and `suites` (tasks, runs, reports). Importing it imports nothing heavy, so `probes`
can derive its errors from `LingprobeError` without importing `internals`.
"""

from lingprobe.errors import DeviceError, LingprobeError
from lingprobe.version import __version__

__all__ = ["DeviceError", "LingprobeError", "__version__"]
