"""Every case of the bad-input table, and the table itself as markdown (`tests/BAD_INPUTS.md`).

`python -m tests.bad_inputs.table > tests/BAD_INPUTS.md` rewrites the table;
`python -m tests.bad_inputs.table --run-typed` checks the typed cases in this plain interpreter
and prints `{case id: failure or ''}` as JSON (what `tests/test_bad_inputs.py` reads).
"""

from __future__ import annotations

import json
import sys

from tests.bad_inputs.case import Case, run_plain
from tests.bad_inputs.data_cases import DATA_CASES
from tests.bad_inputs.explorer_cases import EXPLORER
from tests.bad_inputs.feature_set_cases import FEATURE_SETS
from tests.bad_inputs.internals_cases import ITEMS, SITES
from tests.bad_inputs.label_cases import LABELS
from tests.bad_inputs.load_cases import LOAD
from tests.bad_inputs.memory_cases import MEMORY
from tests.bad_inputs.probes_cases import PROBES
from tests.bad_inputs.readers_cases import READERS
from tests.bad_inputs.sae_cases import SAE
from tests.bad_inputs.store_cases import STORE
from tests.bad_inputs.suite_cases import SUITES_CASES

SECTIONS = {
    "Items": ITEMS,
    "Sites": SITES,
    "SAE sites and sparse probes": SAE,
    "Store settings and damaged shards": STORE,
    "Feature sets on disk": FEATURE_SETS,
    "Loading": LOAD,
    "Probes, configs and result folders": PROBES,
    "Memory budgets": MEMORY,
    "Data files": READERS,
    "Labels, quoting, trees and configs": LABELS,
    "Suites, sweeps and the command line": SUITES_CASES,
    "Data folders and downloads": DATA_CASES,
    "The HTML explorer and plots": EXPLORER,
}
CASES: list[Case] = [case for cases in SECTIONS.values() for case in cases]
INTRO = """# Bad inputs and damages, and what each gets

Generated from `tests/bad_inputs/` by `python -m tests.bad_inputs.table > tests/BAD_INPUTS.md`;
`tests/test_bad_inputs.py` runs every row and checks that this file matches the cases. Raised
errors are one line and derive from `lingprobe.LingprobeError`. "typed" rows pass a value of the
wrong type; the test run's beartype hook would reject them first, so they run in a plain
interpreter, as users run lingprobe. Rows without an error show the recovery: the damaged shard
recomputed and logged, the new model's features, the warning and NaN metrics.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\\\|")


def markdown() -> str:
    """The table: one section per part, one row per case."""
    lines = [INTRO]
    for title, cases in SECTIONS.items():
        lines += [
            f"## {title}",
            "",
            "| case | bad input or damage | what the user gets | run |",
            "| --- | --- | --- | --- |",
        ]
        for case in cases:
            how = "plain Python (typed)" if case.typed else "pytest"
            lines.append(f"| `{case.id}` | {_cell(case.what)} | {_cell(case.expect)} | {how} |")
        lines.append("")
    lines.append(f"{len(CASES)} cases.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if "--run-typed" in sys.argv:
        print(json.dumps(run_plain([c for c in CASES if c.typed])))
    else:
        sys.stdout.write(markdown())
