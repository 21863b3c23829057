"""lingprobe's base: the version and the root of every error the library raises on purpose.

The three packages users import sit on top of this one: `internals` (features), `probes`
(results) and `suites` (tasks, runs, reports). It imports nothing heavy, so `probes` can derive its
errors from `LingprobeError` without importing `internals`.
"""

from lingprobe.errors import LingprobeError
from lingprobe.version import __version__

__all__ = ["LingprobeError", "__version__"]
