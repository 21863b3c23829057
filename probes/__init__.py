"""probes: many probes trained at once on tensors of features (no model code, no datasets).

Two trainers:
- `fit_probes`, the minibatch AdamW grid trainer: trains a `ProbeGrid` (sites x seeds x
  task/control x train masks) in one batched minibatch loop (Holmes protocol) and returns
  `ProbeResults`;
- `fit_logistic_regression`, the batched L-BFGS logistic-regression fitter: many L2 logistic
  regressions at once, equal to scikit-learn's `LogisticRegression`, returning `LogisticProbes`.

The public surface is four namespaces, each with an `__all__` that a test holds fixed:
- `probes` (this one): the grid, the fits, their results, splits and metrics;
- `probes.stats`: paired bootstrap intervals, paired comparisons and tests, Holm's correction;
- `probes.structural`: structural probes (Hewitt & Manning 2019);
- `probes.erasure`: concept erasure (LEACE, INLP) and probing after it.
`probes.structural` and `probes.erasure` are packages whose modules are private (named `_*.py`);
`probes.stats` is a module that re-exports from the modules holding the statistics, which
`ProbeResults` imports directly (a package's `__init__` would load them all on each import).
The trainers' machinery lives in the private package `probes._grid`. Other module paths are
where the code lives, not what to import: a name is public when one of the four namespaces
exports it.
"""

from probes import erasure, stats, structural
from probes._grid.inputs import TargetKind
from probes.config import TrainConfig
from probes.control import control_labels
from probes.directions import Directions, directions
from probes.errors import (
    ClassAbsentFromTrainWarning,
    DegenerateIntervalWarning,
    EmptySplitWarning,
    LogisticConvergenceWarning,
    ProbeConfigError,
    ProbeDivergedWarning,
    ProbeInputError,
    ResultsDamagedError,
    TreeError,
)
from probes.grid import ProbeGrid
from probes.logistic import LogisticProbes, fit_logistic_regression
from probes.mdl import MDLBlocks, online_codelength, prefix_size, uniform_codelength
from probes.metric_table import METRICS, Metric, higher_is_better
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
from probes.predictions import TestPredictions
from probes.rank_metrics import rank_metrics
from probes.results import ProbeResults
from probes.sample_complexity import epsilon_sample_complexity, surplus_description_length
from probes.scores import seed_scores
from probes.splits import DEV, SPLIT_NAMES, TEST, TRAIN, UNUSED, Splits, random_splits
from probes.train import fit_probes

__all__ = [
    "DEV",
    "METRICS",
    "SPLIT_NAMES",
    "TEST",
    "TRAIN",
    "UNUSED",
    "ClassAbsentFromTrainWarning",
    "DegenerateIntervalWarning",
    "Directions",
    "EmptySplitWarning",
    "LogisticConvergenceWarning",
    "LogisticProbes",
    "MDLBlocks",
    "Metric",
    "ProbeConfigError",
    "ProbeDivergedWarning",
    "ProbeGrid",
    "ProbeInputError",
    "ProbeResults",
    "ResultsDamagedError",
    "Splits",
    "TargetKind",
    "TestPredictions",
    "TrainConfig",
    "TreeError",
    "accuracy",
    "classification_metrics",
    "confusion_matrices",
    "control_labels",
    "directions",
    "epsilon_sample_complexity",
    "erasure",
    "fit_logistic_regression",
    "fit_probes",
    "higher_is_better",
    "macro_f1",
    "mcc",
    "multilabel_metrics",
    "online_codelength",
    "pearson",
    "prefix_size",
    "random_splits",
    "rank_metrics",
    "regression_metrics",
    "seed_scores",
    "stats",
    "structural",
    "surplus_description_length",
    "uniform_codelength",
]
