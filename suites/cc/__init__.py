"""The English comparative correlative (Weissweiler et al., 2022): syntax probe and semantic test.

Syntax: `generate` minimal pairs from the CC grammar, `feature_subsets` (D_f, balanced per value,
train on the lowest quartile), `probe_feature_subsets` / `probe_frames` (one logistic regression
per layer), `read_labelled_sentences` + `split_corpus` for user corpora.
Semantics: `run_semantic_test` on a masked or causal LM (S1-S7, `single_token_pairs` filter),
and the pure arithmetic `accuracies`, `decision_flips`, `table2`...`table5`.
"""

from suites.cc.corpus import labelled_frame, read_labelled_sentences, split_corpus
from suites.cc.errors import CorpusError, ScoringError, VocabularyError
from suites.cc.generate import feature_ranges, feature_subsets, generate, lowest_quartile
from suites.cc.grammar import FEATURES, Sentence, draw, render, shape_table
from suites.cc.lexicon import (
    AdjectivePair,
    filler_token_id,
    load_adjective_pairs,
    load_names,
    single_token_pairs,
)
from suites.cc.schemata import (
    MASK,
    SemanticInstance,
    calibration_sentence,
    sample_instances,
    schema_sentence,
    semantic_sentences,
)
from suites.cc.scoring import causal_filler_log_probs, lm_kind, masked_filler_log_probs
from suites.cc.semantic_metrics import (
    accuracies,
    calibrated_scores,
    decision_flips,
    decisions,
    table2,
    table3,
    table4,
    table5,
)
from suites.cc.semantics import SemanticConfig, SemanticRun, run_semantic_test, score_sentences
from suites.cc.syntax_probe import (
    SyntaxProbeConfig,
    layer_predictions,
    probe_feature_subsets,
    probe_frames,
    sentence_features,
)
from suites.cc.vocabulary import SyntaxVocabulary, load_syntax_vocabulary

__all__ = [
    "FEATURES",
    "MASK",
    "AdjectivePair",
    "CorpusError",
    "ScoringError",
    "SemanticConfig",
    "SemanticInstance",
    "SemanticRun",
    "Sentence",
    "SyntaxProbeConfig",
    "SyntaxVocabulary",
    "VocabularyError",
    "accuracies",
    "calibrated_scores",
    "calibration_sentence",
    "causal_filler_log_probs",
    "decision_flips",
    "decisions",
    "draw",
    "feature_ranges",
    "feature_subsets",
    "filler_token_id",
    "generate",
    "labelled_frame",
    "layer_predictions",
    "lm_kind",
    "load_adjective_pairs",
    "load_names",
    "load_syntax_vocabulary",
    "lowest_quartile",
    "masked_filler_log_probs",
    "probe_feature_subsets",
    "probe_frames",
    "read_labelled_sentences",
    "render",
    "run_semantic_test",
    "sample_instances",
    "schema_sentence",
    "score_sentences",
    "semantic_sentences",
    "sentence_features",
    "shape_table",
    "single_token_pairs",
    "split_corpus",
    "table2",
    "table3",
    "table4",
    "table5",
]
