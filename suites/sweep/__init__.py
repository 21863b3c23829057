"""Sweeps: models x suites x sites as resumable units of work, local or on a Ray cluster.

`load_config(path)` reads a TOML sweep file; `plan_units(config)` lists its units (one model x
one dataset group each); `run_sweep(config)` runs the units not yet finished (executor
"local" or "ray"), records failures without stopping, and merges one leaderboard;
`render(out)` draws the report. The CLI is `lingprobe sweep CONFIG [--dry-run]`. With
`log_to` ("mlflow" or "wandb"), each unit that ends is logged as one run of that experiment
tracker (`suites.trackers`).
`extract_on_ray(model, items, sites, store, workers=N)` splits one model's extraction across
Ray workers by items into one store and returns its `FeatureSet`.
"""

from suites.sweep.config import ModelSpec, Resources, SuiteEntry, SweepConfig
from suites.sweep.cost import plan_table
from suites.sweep.errors import SweepConfigError, SweepError
from suites.sweep.parse import load_config, parse_config
from suites.sweep.plan import by_model, plan_units
from suites.sweep.ray_extract import extract_on_ray
from suites.sweep.records import read_log
from suites.sweep.report import render
from suites.sweep.run import SweepSummary, run_sweep
from suites.sweep.units import Unit, UnitOutcome

__all__ = [
    "ModelSpec",
    "Resources",
    "SuiteEntry",
    "SweepConfig",
    "SweepConfigError",
    "SweepError",
    "SweepSummary",
    "Unit",
    "UnitOutcome",
    "by_model",
    "extract_on_ray",
    "load_config",
    "parse_config",
    "plan_table",
    "plan_units",
    "read_log",
    "render",
    "run_sweep",
]
