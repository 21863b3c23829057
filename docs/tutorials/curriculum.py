"""Curriculum NLI diagnostics (Chen & Gao 2022): what frozen features know about an NLI phenomenon.

For one phenomenon (boolean reasoning) the premise and hypothesis are pooled and concatenated;
probes learn from N examples per label (inoculation learning curves), from the hypothesis alone
(the artifact baseline), and give every item a pointwise V-information (PVI, Ethayarajh et al.
2022) that splits the data into simple and hard halves.

Run: `python docs/tutorials/curriculum.py [OUT]` (default `tutorial-out/curriculum`). It reads the
curriculum sample that ships with lingprobe and caps it to a few hundred pairs.
"""

import sys
from pathlib import Path

import polars as pl

from internals import load_subject, sites
from suites.curriculum import CurriculumConfig, load_phenomena, run_curriculum
from suites.suite import with_probe

out = Path(sys.argv[1] if len(sys.argv) > 1 else "tutorial-out/curriculum")

# One phenomenon from the shipped sample, capped (the `val` split is the test split).
tasks = load_phenomena(["boolean"], data="samples")
tasks = {name: task.subsample({"train": 120, "test": 60}, seed=0) for name, task in tasks.items()}

minilm = load_subject("minilm")
config = with_probe(CurriculumConfig(sizes=(10, 40), pvi_folds=2), seeds=(0,), epochs=2)
run_curriculum(
    tasks,
    out,
    subject=minilm,
    sites=sites.last(minilm),
    analyses=["inoculation", "hypothesis-only", "pvi"],
    config=config,
    store=out / "store",
    progress=False,
)

# Learning curves: test accuracy per examples-per-label, pair vs hypothesis-only input.
print(pl.read_parquet(out / "boolean" / "inoculation.parquet").head())
# PVI per item (bits); V-information is its mean.
print(pl.read_parquet(out / "boolean" / "pvi.parquet").head())
