"""Every suite lingprobe runs, registered once: the CLI (`lingprobe run NAME`), sweeps
(`[[suites]] suite = NAME`) and `lingprobe report` find them here. A new suite is one module
subclassing `suites.suite.Suite` plus one line below (docs/extending.md)."""

from __future__ import annotations

from suites.cc.suite import CCSuite
from suites.curriculum.suite import CurriculumSuite
from suites.edge.suite import EdgeSuite
from suites.errors import TaskError
from suites.holmes.suite import HolmesSuite
from suites.structural.suite import StructuralSuite
from suites.suite import Suite

SUITES: dict[str, Suite] = {
    suite.name: suite
    for suite in (EdgeSuite(), HolmesSuite(), CurriculumSuite(), CCSuite(), StructuralSuite())
}


def suite_of_manifest(name: str) -> Suite:
    """The suite that writes manifests saying `"suite": name` (for `lingprobe report`)."""
    for suite in SUITES.values():
        if name in suite.manifest_names:
            return suite
    raise TaskError(
        f"no suite writes {name!r} results; `lingprobe report` renders folders of"
        f" {', '.join(n for s in SUITES.values() for n in s.manifest_names)} and sweeps"
    )
