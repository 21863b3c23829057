"""probes: many probes trained at once on tensors of features (no model code, no datasets).

`fit_probes` trains a `ProbeGrid` (sites x seeds x task/control x train masks) in one batched
minibatch loop (Holmes protocol); `fit_logistic_regression` fits batched L2 logistic regressions
equal to scikit-learn's. See DESIGN.md §4.
"""

from probes.config import TrainConfig
from probes.control import control_labels
from probes.errors import (
    ClassAbsentFromTrainWarning,
    EmptySplitWarning,
    LogisticConvergenceWarning,
    ProbeConfigError,
    ProbeDivergedWarning,
    ProbeInputError,
    ResultsDamagedError,
)
from probes.grid import ProbeGrid, ProbeLayout
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
from probes.streams import training_order
from probes.train import fit_probes

__all__ = [
    "ClassAbsentFromTrainWarning",
    "EmptySplitWarning",
    "LogisticConvergenceWarning",
    "LogisticProbes",
    "MDLBlocks",
    "ProbeConfigError",
    "ProbeDivergedWarning",
    "ProbeGrid",
    "ProbeInputError",
    "ProbeLayout",
    "ProbeResults",
    "ResultsDamagedError",
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
    "training_order",
    "uniform_codelength",
]
