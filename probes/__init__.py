"""probes: many probes trained at once on tensors of features (no model code, no datasets).

`fit_probes` trains a `ProbeGrid` (sites x seeds x task/control x train masks) in one batched
minibatch loop (Holmes protocol); `fit_logistic_regression` fits batched L2 logistic regressions
equal to scikit-learn's. See DESIGN.md §4.
"""

from probes.config import TrainConfig
from probes.control import control_labels
from probes.errors import (
    ClassAbsentFromTrainWarning,
    LogisticConvergenceWarning,
    ProbeConfigError,
    ProbeInputError,
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

__all__ = [
    "ClassAbsentFromTrainWarning",
    "LogisticConvergenceWarning",
    "LogisticProbes",
    "MDLBlocks",
    "ProbeConfigError",
    "ProbeGrid",
    "ProbeInputError",
    "ProbeLayout",
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
    "training_order",
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
