"""The public surface, held fixed: each namespace's exports, and suites using only those.

A name is public when a namespace below exports it (`__all__`); every other module path is where
the code lives. Adding, removing or moving a public name means editing the sets here (and a line
in the CHANGELOG), so a change to the surface is deliberate. `suites` exports nothing from its
`__init__`: its public names are its modules and packages.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import suites

ROOT = Path(__file__).resolve().parents[1]

PUBLIC = {
    "lingprobe": {"DeviceError", "FeatureSetError", "LingprobeError", "__version__"},
    "internals": {
        "MINILM",
        "SMOLLM2",
        "Backend",
        "ExtractionMemoryError",
        "FeatureSet",
        "FeatureSetError",
        "Init",
        "InterventionError",
        "ItemError",
        "LingprobeError",
        "ModelNotFoundError",
        "OptionError",
        "PoolHow",
        "ProgressBar",
        "ProgressStep",
        "Reading",
        "Site",
        "Steering",
        "SiteError",
        "SiteSpec",
        "SpanItem",
        "Subject",
        "TokenSegments",
        "TokenizerError",
        "TransformerSubject",
        "TruncationWarning",
        "UnsupportedModelError",
        "VectorsFileError",
        "cache_root",
        "canonical_name",
        "extract_shards",
        "fingerprint",
        "lm_loss",
        "load_subject",
        "packaged_path",
        "pool_spans",
        "seeded_global_rng",
        "shards_per_window",
        "sites",
        "span_attention",
        "steer",
        "steering_effect",
    },
    "probes": {
        "DEV",
        "METRICS",
        "Directions",
        "Metric",
        "directions",
        "higher_is_better",
        "SPLIT_NAMES",
        "TEST",
        "TRAIN",
        "UNUSED",
        "ClassAbsentFromTrainWarning",
        "DegenerateIntervalWarning",
        "EmptySplitWarning",
        "LogisticConvergenceWarning",
        "LogisticProbes",
        "MDLBlocks",
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
        "epsilon_sample_complexity",
        "erasure",
        "fit_logistic_regression",
        "fit_probes",
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
    },
    "probes.stats": {
        "IntervalMethod",
        "ItemResamples",
        "Replicates",
        "SwapPatterns",
        "bootstrap_p_values",
        "bootstrap_probes",
        "bootstrap_rank_metrics",
        "compare_probes",
        "confidence_interval",
        "holm_bonferroni",
        "permutation_test",
        "seed_mean_intervals",
    },
    "probes.structural": {
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
    },
    "probes.erasure": {
        "AffineEraser",
        "InlpResult",
        "erase_then_probe",
        "fit_inlp",
        "fit_leace",
        "random_eraser",
    },
}

SUITES_MODULES = {
    "cc",
    "cli",
    "commands",
    "curriculum",
    "datasets",
    "edge",
    "errors",
    "figure_model",
    "hf_labels",
    "hf_source",
    "holmes",
    "html",
    "outputs",
    "overrides",
    "plot_style",
    "plots",
    "probing",
    "provenance",
    "readers",
    "registry",
    "schema",
    "structural",
    "suite",
    "sweep",
    "tasks",
    "trackers",
}

# what users' code imports from probes and internals: suites and the tutorials
USERS = ("suites", "docs/tutorials")
LOWER = ("probes", "internals")


@pytest.mark.parametrize("namespace", sorted(PUBLIC))
def test_each_namespace_exports_exactly_its_public_names(namespace):
    module = importlib.import_module(namespace)
    exported = list(module.__all__)
    assert len(exported) == len(set(exported)), f"{namespace}.__all__ repeats a name"
    assert set(exported) == PUBLIC[namespace]
    missing = [name for name in exported if not hasattr(module, name)]
    assert not missing, f"{namespace}.__all__ lists names it does not define: {missing}"


def test_suites_public_names_are_its_modules():
    found = {m.name for m in pkgutil.iter_modules(suites.__path__) if not m.name.startswith("_")}
    assert found == SUITES_MODULES


def private_imports(source: str, public: dict[str, set[str]]) -> list[str]:
    """The imports from `probes`/`internals` in `source` that no public namespace exports."""
    wrong = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
            wrong += [m for m in modules if m.split(".")[0] in LOWER and m not in public]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] not in LOWER:
                continue
            names = public.get(node.module)
            if names is None:
                wrong.append(f"{node.module} (not a public namespace)")
            else:
                wrong += [f"{node.module}.{a.name}" for a in node.names if a.name not in names]
    return wrong


def test_users_import_only_public_names():
    wrong = {
        str(path.relative_to(ROOT)): found
        for folder in USERS
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (found := private_imports(path.read_text(encoding="utf-8"), PUBLIC))
    }
    assert not wrong, f"imports of names probes/internals do not export: {wrong}"


def test_the_import_check_can_fail():
    source = (
        "import probes._grid.streams\n"
        "from probes.splits import TRAIN\n"
        "from probes import split_codes, ProbeGrid\n"
        "from probes.stats import holm_bonferroni\n"
        "from internals import sites\n"
        "from lingprobe.atomic import atomic_write_bytes\n"
    )
    assert private_imports(source, PUBLIC) == [
        "probes._grid.streams",
        "probes.splits (not a public namespace)",
        "probes.split_codes",
    ]
