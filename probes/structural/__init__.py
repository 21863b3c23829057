"""Structural probes (Hewitt & Manning 2019): distances and depths of parse trees, batched.

A `StructuralGrid` trains every (site, seed, kind) probe of a `StructuralConfig` at once
(`fit_structural_probes`, returning `StructuralResults`); `SentenceTrees` hold the gold trees,
`score_sentences` and `StructuralScorer` compute UUAS, DSpr., root accuracy and NSpr., and
`right_branching` is the baseline tree. The modules below this package are private (`_probe`,
`_train`, `_results`, `_site_groups`, `_trees`, `_metrics`): import from `probes.structural`.
"""

from probes.structural._metrics import (
    StructuralKind,
    StructuralScorer,
    right_branching,
    score_sentences,
    spanning_tree_parents,
    spearman,
)
from probes.structural._probe import StructuralConfig, StructuralGrid, StructuralLayout
from probes.structural._results import StructuralResults
from probes.structural._train import fit_structural_probes
from probes.structural._trees import PaddedTrees, SentenceTrees

__all__ = [
    "PaddedTrees",
    "SentenceTrees",
    "StructuralConfig",
    "StructuralGrid",
    "StructuralKind",
    "StructuralLayout",
    "StructuralResults",
    "StructuralScorer",
    "fit_structural_probes",
    "right_branching",
    "score_sentences",
    "spanning_tree_parents",
    "spearman",
]
