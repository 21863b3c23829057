"""The benchmarks' shared fixture: `figures`, whose record is written as JSON after the test.

Every benchmark carries one of the markers `quick` (the set that runs in minutes:
`python3 noxfile.py -s bench -- -m quick`) or `full`, and `needs_data` (reads `LINGPROBE_DATA`)
or `cuda` (needs a GPU) where it does; pyproject.toml registers them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.figures import Figures


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Iterator[Figures]:
    """Figures of this test; written to `.benchmarks/figures/` when the test passes."""
    path = Path(str(request.node.path))
    record = Figures(f"{path.stem}::{request.node.name}", path)
    yield record
    call = getattr(request.node, "rep_call", None)
    if call is not None and call.passed:
        print(f"  figures: {record.write()}")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """Keep each phase's report on the test, so `figures` writes only after a passing call."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A benchmark must say how long it is: `quick` or `full`."""
    for item in items:
        if not any(item.get_closest_marker(m) for m in ("quick", "full")):
            raise pytest.UsageError(f"{item.nodeid}: mark the benchmark quick or full")
