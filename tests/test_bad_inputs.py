"""The bad-input table (`tests/BAD_INPUTS.md`): every row gets its specific error, recovery or
warning, never a silently wrong number. Cases live in `tests/bad_inputs/`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bad_inputs.case import Case, Env, check
from tests.bad_inputs.table import CASES, markdown

ROOT = Path(__file__).resolve().parents[1]
PLAIN = [c for c in CASES if not c.typed]
TYPED = [c for c in CASES if c.typed]


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> Env:
    return Env(tmp_path_factory.mktemp("bad-inputs"))


@pytest.mark.parametrize("case", PLAIN, ids=[c.id for c in PLAIN])
def test_case(case: Case, env: Env) -> None:
    check(case, env)


@pytest.fixture(scope="module")
def typed_outcomes() -> dict[str, str]:
    """The typed cases, run once in a plain interpreter (no beartype hook), as users run them."""
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "tests.bad_inputs.table", "--run-typed"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", TYPED, ids=[c.id for c in TYPED])
def test_typed_case(case: Case, typed_outcomes: dict[str, str]) -> None:
    assert typed_outcomes[case.id] == ""


def test_table_matches_the_cases() -> None:
    assert len({c.id for c in CASES}) == len(CASES), "case ids must be unique"
    written = (ROOT / "tests" / "BAD_INPUTS.md").read_text(encoding="utf-8")
    assert written == markdown(), (
        "tests/BAD_INPUTS.md is stale: python -m tests.bad_inputs.table > tests/BAD_INPUTS.md"
    )
