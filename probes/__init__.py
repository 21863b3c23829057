"""probes: many probes trained at once on tensors of features (no model code, no datasets).

Two trainers:
- `fit_probes`, the minibatch AdamW grid trainer: trains a `ProbeGrid` (sites x seeds x
  task/control x train masks) in one batched minibatch loop (Holmes protocol) and returns
  `ProbeResults`;
- `fit_logistic_regression`, the batched L-BFGS logistic-regression fitter: many L2 logistic
  regressions at once, equal to scikit-learn's `LogisticRegression`, returning `LogisticProbes`.

The names below are what a user calls; the training loop's parts live in their modules.
"""

from probes.config import TrainConfig
from probes.control import control_labels
from probes.errors import (
    ClassAbsentFromTrainWarning,
    LogisticConvergenceWarning,
    ProbeConfigError,
    ProbeInputError,
)
from probes.grid import ProbeGrid
from probes.logistic import LogisticProbes, fit_logistic_regression
from probes.mdl import MDLBlocks, block_items, online_codelength, uniform_codelength
from probes.metrics import (
    accuracy,
    classification_metrics,
    confusion_matrices,
    macro_f1,
    mcc,
    multilabel_metrics,
    pearson,
    regression_metrics,
)
from probes.results import ProbeResults
from probes.splits import Splits, random_splits, split_codes
from probes.train import fit_probes

__all__ = [
    "ClassAbsentFromTrainWarning",
    "LogisticConvergenceWarning",
    "LogisticProbes",
    "MDLBlocks",
    "ProbeConfigError",
    "ProbeGrid",
    "ProbeInputError",
    "ProbeResults",
    "Splits",
    "TrainConfig",
    "accuracy",
    "block_items",
    "classification_metrics",
    "confusion_matrices",
    "control_labels",
    "fit_logistic_regression",
    "fit_probes",
    "macro_f1",
    "mcc",
    "multilabel_metrics",
    "online_codelength",
    "pearson",
    "random_splits",
    "regression_metrics",
    "split_codes",
    "uniform_codelength",
]
