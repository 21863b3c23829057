"""Units as MLflow runs: one run per unit in the experiment `MLFLOW_EXPERIMENT_NAME` (default
"lingprobe") of the tracking URI MLflow reads (`MLFLOW_TRACKING_URI`; a local `file:` store
needs `MLFLOW_ALLOW_FILE_STORE=true` from MLflow 3.7 on)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from suites.trackers.unit_log import UnitLog, flat_settings

EXPERIMENT = "lingprobe"
MAX_PARAM = 6000  # MLflow's longest parameter value; settings.json holds every setting
BATCH_PARAMS, BATCH_METRICS = 100, 1000  # MLflow's log_batch limits


class MlflowTracker:
    """Logs each unit as one MLflow run (tags `lingprobe.*`, params = settings, metrics =
    headline scores per layer, artifacts = settings.json and the unit's files)."""

    name = "mlflow"

    def __init__(self, mlflow: ModuleType, out: Path) -> None:
        from mlflow.entities import Metric, Param  # the extra, imported once it is asked for

        self.entities: tuple[Any, Any] = (Metric, Param)
        self.client = mlflow.tracking.MlflowClient()
        name = os.environ.get("MLFLOW_EXPERIMENT_NAME") or EXPERIMENT
        found = self.client.get_experiment_by_name(name)
        self.experiment = found.experiment_id if found else self.client.create_experiment(name)
        self.out = out

    def log_unit(self, log: UnitLog) -> str:
        """One run for the unit; its id."""
        Metric, Param = self.entities
        tags = {f"lingprobe.{k}": v for k, v in log.tags.items()}
        tags |= {"lingprobe.unit": log.name, "lingprobe.sweep": str(log.sweep)}
        if log.error:
            tags["lingprobe.error"] = log.error[:MAX_PARAM]
        run = self.client.create_run(self.experiment, run_name=log.name, tags=tags)
        run_id = run.info.run_id
        try:
            params = [
                Param(k, v) for k, v in flat_settings(log.settings).items() if len(v) <= MAX_PARAM
            ]
            for start in range(0, len(params), BATCH_PARAMS):
                self.client.log_batch(run_id, params=params[start : start + BATCH_PARAMS])
            now = int(time.time() * 1000)
            metrics = [Metric(s.key, s.value, now, s.layer) for s in log.scores]
            for start in range(0, len(metrics), BATCH_METRICS):
                self.client.log_batch(run_id, metrics=metrics[start : start + BATCH_METRICS])
            self.client.log_dict(run_id, log.settings, "settings.json")
            for path, folder in log.files:
                self.client.log_artifact(run_id, str(path), folder)
        except BaseException:
            self.client.set_terminated(run_id, "FAILED")
            raise
        self.client.set_terminated(run_id, "FINISHED" if log.ok else "FAILED")
        return str(run_id)
