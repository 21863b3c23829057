"""Experiment trackers: every unit of a sweep (and of `lingprobe run`) logged as one run of
MLflow or Weights & Biases (`--log-to mlflow|wandb`, sweep key `[sweep] log_to`).

Each unit's run holds its settings (model, suite, group and the suite's whole config), the
sweep's manifest, its headline scores per layer (metric `TASK/METRIC` at step = layer, with
`TASK/selectivity` where control tasks ran) and its report files (its rows and the files of its
unit folder). Units are logged by the driver as they end, so a rerun logs only the units it
runs. Where the runs go is the tracker's own setting: `MLFLOW_TRACKING_URI` and
`MLFLOW_EXPERIMENT_NAME`, or `WANDB_PROJECT`, `WANDB_MODE` and `WANDB_DIR`.
"""

from suites.trackers.open import TRACKERS, TrackerError, open_tracker
from suites.trackers.unit_log import Score, UnitLog

__all__ = ["TRACKERS", "Score", "TrackerError", "UnitLog", "open_tracker"]
