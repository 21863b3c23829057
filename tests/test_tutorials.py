"""Every tutorial of the docs (`docs/tutorials/*.py`) runs offline on the shipped samples and
writes the tables its page promises, so the tutorials cannot go stale."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from suites.schema import RESULTS_SCHEMA

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "docs" / "tutorials"
SCHEMA = set(RESULTS_SCHEMA)

# tutorial -> (a table it writes, columns that table must hold)
OUTPUTS = {
    "edge": ("scores.parquet", SCHEMA),
    "holmes": ("leaderboard.parquet", {"dataset", "model", "score", "fraction", "ranked"}),
    "curriculum": ("boolean/pvi.parquet", {"phenomenon", "split", "pvi", "difficulty"}),
    "cc": ("syntax_layers.parquet", {"feature", "layer", "accuracy"}),
    "structural": ("structural.parquet", SCHEMA),
    "multilingual": ("structural.parquet", SCHEMA),
    "own_model": ("probes.parquet", {"site", "seed", "variant", "split", "metric", "value"}),
    "mass_mean": ("steering.parquet", {"alpha", "base_loss", "loss", "delta", "logit_delta"}),
    "heads": ("heads.parquet", {"site", "value"}),
}


def test_every_tutorial_is_checked():
    assert {p.stem for p in TUTORIALS.glob("*.py")} == set(OUTPUTS)


def test_every_tutorial_page_includes_its_script():
    pages = " ".join(p.read_text() for p in TUTORIALS.glob("*.md"))
    for name in OUTPUTS:
        assert f'--8<-- "docs/tutorials/{name}.py"' in pages


def run(name: str, out: Path) -> subprocess.CompletedProcess:
    env = os.environ | {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    script = TUTORIALS / f"{name}.py"
    return subprocess.run(
        [sys.executable, str(script), str(out)], env=env, capture_output=True, text=True
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_tutorial_runs_and_writes_its_table(name, tmp_path):
    done = run(name, tmp_path / name)
    assert done.returncode == 0, done.stderr[-3000:]
    table_name, columns = OUTPUTS[name]
    table = pl.read_parquet(tmp_path / name / table_name)
    assert columns <= set(table.columns) and table.height > 0
    numeric = [c for c in ("value", "score", "accuracy", "pvi", "delta") if c in table.columns]
    assert table[numeric[0]].is_finite().all()
