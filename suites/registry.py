"""Every suite lingprobe runs, registered once: the CLI (`lingprobe run NAME`), sweeps
(`[[suites]] suite = NAME`) and `lingprobe report` find them here. A new suite is one module
implementing `suites.suite.Suite` plus one line below."""

from __future__ import annotations

import difflib

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


def get_suite(name: str) -> Suite:
    """The registered suite `name`, or an error naming the closest and every suite."""
    if name in SUITES:
        return SUITES[name]
    close = difflib.get_close_matches(name, list(SUITES), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise TaskError(f"no suite named {name!r}; {hint}suites: {', '.join(SUITES)}")


def suite_of_manifest(name: str) -> Suite:
    """The suite that writes manifests saying `"suite": name` (for `lingprobe report`)."""
    for suite in SUITES.values():
        if name in suite.manifest_names:
            return suite
    raise TaskError(
        f"no suite writes {name!r} results; `lingprobe report` renders folders of"
        f" {', '.join(n for s in SUITES.values() for n in s.manifest_names)} and sweeps"
    )
