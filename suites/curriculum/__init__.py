"""Curriculum NLI diagnostics (Chen & Gao, NAACL 2022) on `internals` features and `probes`.

- `load_phenomena` (through the dataset registry), `read`, `read_all`: one `Task` per
  phenomenon (3-way or 2-way labels; `val` is the test split).
- `zero_shot`: MCC of an NLI model (HF sequence classification) per phenomenon; `model_labels`
  maps the model's classes to the benchmark's, 3-way predictions collapse for 2-way phenomena.
- `inoculation`: learning curves of probes on frozen pair features, N examples per label;
  `finetune_inoculation` does the same by full fine-tuning.
- `hypothesis_only`, `hypothesis_gap`: the hypothesis-only baseline and its gap to the full input.
- `pointwise_v_information`, `v_information`, `pvi_scores`, `difficulty_halves`: dataset
  difficulty by (pointwise) V-information with the label prior as the null model.
- `cross_distribution`, `cross_matrix`: train simple/hard x test simple/hard.
- `nli_feature_set`, `NLIFeatureSet`: the pair features kept in a store (every probe analysis
  reads them by groups of sites within `CurriculumConfig.train.memory`).
- `run_curriculum`, `summarise`: a whole run to parquet tables and plots.
"""

from suites.curriculum.config import ANALYSES, CurriculumConfig
from suites.curriculum.cross_distribution import cross_distribution, cross_matrix
from suites.curriculum.features import NLIFeatures, nli_features
from suites.curriculum.finetune import FineTuneConfig, fine_tune, finetune_inoculation
from suites.curriculum.hypothesis_only import hypothesis_gap, hypothesis_only
from suites.curriculum.inoculation import inoculation, learning_curves
from suites.curriculum.labels import LabelMappingError, ModelLabels, matthews, model_labels
from suites.curriculum.probe_outputs import probe_probabilities
from suites.curriculum.pvi import (
    difficulty_halves,
    label_prior,
    pointwise_v_information,
    pvi_scores,
    v_information,
    v_information_table,
)
from suites.curriculum.report import summarise
from suites.curriculum.run import run_curriculum
from suites.curriculum.stored_features import NLIFeatureSet, nli_feature_set
from suites.curriculum.zero_shot import nli_probabilities, zero_shot
from suites.readers.curriculum_nli import (
    THREE_WAY,
    TWO_WAY,
    label_scheme,
    load_phenomena,
    read,
    read_all,
    read_files,
    registry_phenomena,
)

__all__ = [
    "ANALYSES",
    "THREE_WAY",
    "TWO_WAY",
    "CurriculumConfig",
    "FineTuneConfig",
    "LabelMappingError",
    "ModelLabels",
    "NLIFeatureSet",
    "NLIFeatures",
    "cross_distribution",
    "cross_matrix",
    "difficulty_halves",
    "fine_tune",
    "finetune_inoculation",
    "hypothesis_gap",
    "hypothesis_only",
    "inoculation",
    "label_prior",
    "label_scheme",
    "learning_curves",
    "load_phenomena",
    "matthews",
    "model_labels",
    "nli_feature_set",
    "nli_features",
    "nli_probabilities",
    "pointwise_v_information",
    "probe_probabilities",
    "pvi_scores",
    "read",
    "read_all",
    "read_files",
    "registry_phenomena",
    "run_curriculum",
    "summarise",
    "v_information",
    "v_information_table",
    "zero_shot",
]
