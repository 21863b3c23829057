"""lingprobe's base: the version, the root of every error the library raises on purpose, and the
small pieces `internals` and `probes` share without importing each other: atomic writes
(`lingprobe.atomic`), content digests (`lingprobe.digest`), device checks (`lingprobe.devices`),
and features on disk (`lingprobe.shards`, `lingprobe.feature_set.FeatureSet`, which users import
from `internals`).

The three packages users import sit on top of this one: `internals` (features), `probes`
(results) and `suites` (tasks, runs, reports). Importing it imports nothing heavy, so `probes`
can derive its errors from `LingprobeError` without importing `internals`.
"""

from lingprobe.errors import DeviceError, FeatureSetError, LingprobeError
from lingprobe.version import __version__

__all__ = ["DeviceError", "FeatureSetError", "LingprobeError", "__version__"]
