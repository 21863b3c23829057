"""Structural probes (Hewitt & Manning 2019): is a parse tree's geometry inside the vectors?

A distance probe learns a linear map B under which squared distances between word vectors
approximate the number of edges between the words in the dependency tree; a depth probe learns
one under which squared norms approximate each word's depth. Scores: UUAS and distance Spearman
(DSpr.) for distances, root accuracy and norm Spearman (NSpr.) for depths, with the
right-branching tree as a baseline, for MiniLM and its random twin.

Run: `python docs/tutorials/structural.py [OUT]` (default `tutorial-out/structural`). It reads
the UD English EWT sample that ships with lingprobe and caps it to a few sentences.
"""

import sys
from pathlib import Path

from internals import load_subject, sites
from probes.structural import StructuralConfig
from suites.datasets import DataSource
from suites.structural import StructuralSuiteConfig, by_layer, read_treebank, run_structural
from suites.structural.report import write_structural

out = Path(sys.argv[1] if len(sys.argv) > 1 else "tutorial-out/structural")

samples = DataSource(samples=True)
train_file = samples.path("ud-english-ewt", "train")
train = read_treebank(train_file, limit_sentences=30)
dev = read_treebank(train_file, skip_sentences=30, limit_sentences=10)  # the regimen's dev set
test = read_treebank(samples.path("ud-english-ewt", "dev"), limit_sentences=20)

minilm = load_subject("minilm")
twin = load_subject("minilm", init="random")
config = StructuralSuiteConfig(structural=StructuralConfig(epochs=2))
rows = run_structural(
    [minilm, twin],
    train,
    dev,
    test,
    sites.select(minilm, "0,6"),
    config,
    dataset="ud-english-ewt",
    store=out / "store",
    progress=False,
)  # rows in the results schema; init "baseline" rows are the right-branching tree

write_structural(rows, out)  # OUT/structural.parquet and the per-layer plots
print(by_layer(rows))
