"""`open_tracker(name, out)`: the tracker `--log-to` names, its package imported only then."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Protocol, runtime_checkable

from lingprobe.errors import LingprobeError
from suites.trackers.mlflow_runs import MlflowTracker
from suites.trackers.unit_log import UnitLog
from suites.trackers.wandb_runs import WandbTracker

TRACKERS = ("mlflow", "wandb")
WHERE = {  # the fix when a tracker cannot be opened
    "mlflow": "set MLFLOW_TRACKING_URI to an MLflow server (http://HOST:5000) or a local store"
    " (file:./mlruns, with MLFLOW_ALLOW_FILE_STORE=true)",
    "wandb": "run `wandb login`, or set WANDB_MODE=offline to keep the runs on disk",
}


class TrackerError(LingprobeError, ValueError):
    """A tracker that is not installed or cannot be reached, or an unknown tracker name."""


@runtime_checkable
class Tracker(Protocol):
    """Logs units as runs of one experiment tracker."""

    name: str

    def log_unit(self, log: UnitLog) -> str:
        """Log one unit as one run; returns the run's id."""
        ...


def import_extra(name: str) -> ModuleType:
    """The tracker's package, or a `TrackerError` naming the extra that installs it."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise TrackerError(
            f'--log-to {name}: {name} is not installed; pip install "lingprobe[{name}]"'
        ) from error


def open_tracker(name: str, out: Path) -> Tracker:
    """The tracker that logs the units of the sweep in `out` (its package checked now, so a
    missing one fails before any unit runs)."""
    if name not in TRACKERS:
        raise TrackerError(f"--log-to {name!r}: choose one of {', '.join(TRACKERS)}")
    module = import_extra(name)
    try:
        return MlflowTracker(module, out) if name == "mlflow" else WandbTracker(module, out)
    except Exception as error:
        if isinstance(error, LingprobeError):
            raise
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise TrackerError(f"--log-to {name}: {first[:300]}; {WHERE[name]}") from error
