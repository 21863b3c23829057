"""probes: many probes trained at once on tensors of features (no model code, no datasets).

Two trainers:
- `fit_probes`, the minibatch AdamW grid trainer: trains a `ProbeGrid` (sites x seeds x
  task/control x train masks) in one batched minibatch loop (Holmes protocol) and returns
  `ProbeResults`;
- `fit_logistic_regression`, the batched L-BFGS logistic-regression fitter: many L2 logistic
  regressions at once, equal to scikit-learn's `LogisticRegression`, returning `LogisticProbes`.

`ProbeResults.summary(ci=0.95)` and `compare_probes` attach paired bootstrap intervals and paired
tests (`bootstrap_probes`, `permutation_test`). The names below are what a user calls; the
training loop's parts live in their modules.
"""

from probes.bootstrap import Replicates, bootstrap_probes, confidence_interval
from probes.compare import compare_probes
from probes.config import TrainConfig
from probes.control import control_labels
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
from probes.predictions import TestPredictions
from probes.resampling import ItemResamples, SwapPatterns
from probes.results import ProbeResults
from probes.significance import bootstrap_p_values, holm_bonferroni, permutation_test
from probes.splits import Splits, random_splits, split_codes
from probes.train import fit_probes

# isort: split
# structural probes and concept erasure (issue 19)
from probes.erasure import AffineEraser, fit_leace, random_eraser
from probes.erasure_inlp import InlpResult, fit_inlp
from probes.erasure_probe import erase_then_probe
from probes.structural_metrics import (
    StructuralScorer,
    average_ranks,
    right_branching,
    score_sentences,
    spanning_tree_parents,
    spearman,
)
from probes.structural_probe import StructuralConfig, StructuralGrid, StructuralLayout
from probes.structural_train import StructuralResults, fit_structural_probes
from probes.structural_trees import PaddedTrees, SentenceTrees

# isort: split
# detection metrics and sample complexity (issue 41)
from probes.rank_bootstrap import bootstrap_rank_metrics
from probes.rank_metrics import rank_metrics
from probes.sample_complexity import epsilon_sample_complexity, surplus_description_length

# isort: split
# mass-mean probes and steering directions (issue 41)
from probes.directions import Directions, directions

__all__ = [
    "ClassAbsentFromTrainWarning",
    "DegenerateIntervalWarning",
    "EmptySplitWarning",
    "ItemResamples",
    "LogisticConvergenceWarning",
    "LogisticProbes",
    "MDLBlocks",
    "ProbeConfigError",
    "ProbeDivergedWarning",
    "ProbeGrid",
    "ProbeInputError",
    "ProbeResults",
    "Replicates",
    "ResultsDamagedError",
    "Splits",
    "SwapPatterns",
    "TestPredictions",
    "TrainConfig",
    "TreeError",
    "accuracy",
    "block_items",
    "bootstrap_p_values",
    "bootstrap_probes",
    "classification_metrics",
    "compare_probes",
    "confidence_interval",
    "confusion_matrices",
    "control_labels",
    "fit_logistic_regression",
    "fit_probes",
    "holm_bonferroni",
    "macro_f1",
    "mcc",
    "multilabel_metrics",
    "online_codelength",
    "pearson",
    "permutation_test",
    "random_splits",
    "regression_metrics",
    "split_codes",
    "uniform_codelength",
]

__all__ += [  # structural probes and concept erasure (issue 19)
    "AffineEraser",
    "InlpResult",
    "PaddedTrees",
    "SentenceTrees",
    "StructuralConfig",
    "StructuralGrid",
    "StructuralLayout",
    "StructuralResults",
    "StructuralScorer",
    "average_ranks",
    "erase_then_probe",
    "fit_inlp",
    "fit_leace",
    "fit_structural_probes",
    "random_eraser",
    "right_branching",
    "score_sentences",
    "spanning_tree_parents",
    "spearman",
]

__all__ += [  # detection metrics and sample complexity (issue 41)
    "bootstrap_rank_metrics",
    "epsilon_sample_complexity",
    "rank_metrics",
    "surplus_description_length",
]

__all__ += ["Directions", "directions"]  # mass-mean probes and steering directions (issue 41)
