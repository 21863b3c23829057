"""Edge probing (Sahu et al.): UPOS probes on MiniLM and its random twin, with the Mem-* filters.

Every layer's word vectors are probed for their part of speech; the test set is also filtered by
three annotation-artifact heuristics (Mem-Exact, Mem-Freq, Mem-Uniform), so the tables show how
much of the accuracy survives once memorisable items are gone, for the pretrained encoder and for
a random encoder of the same architecture.

Run: `python docs/tutorials/edge.py [OUT]` (default `tutorial-out/edge`). It reads the UD English
EWT sample that ships with lingprobe (no network) and caps it to a few sentences.
"""

import sys
from pathlib import Path

from internals import load_subject, sites
from suites.datasets import DataSource
from suites.edge import read_conllu
from suites.edge.experiment import EdgeConfig, run_edge
from suites.outputs import write_table
from suites.suite import with_probe

out = Path(sys.argv[1] if len(sys.argv) > 1 else "tutorial-out/edge")

# 1. Data: the shipped sample (DataSource(samples=True)); "full" data downloads once and verifies.
samples = DataSource(samples=True)
train = read_conllu(samples.path("ud-english-ewt", "train"), "upos", limit_sentences=60)
test = read_conllu(samples.path("ud-english-ewt", "dev"), "upos", split="test", limit_sentences=20)

# 2. Subjects: the pretrained model and its random twin (same architecture, fresh weights).
minilm = load_subject("minilm")  # short for sentence-transformers/all-MiniLM-L6-v2
twin = load_subject("minilm", init="random")

# 3. Probes: the paper's grid with fewer seeds and epochs; a control task gives selectivity.
config = with_probe(EdgeConfig(), seeds=(0,), epochs=2, control=True)
layers = sites.select(minilm, "0,6")  # the embeddings and the last layer
results = run_edge([minilm, twin], train, test, layers, config, store=out / "store", progress=False)

# 4. Tables: scores in the results schema, accuracy drops on the filtered test sets.
write_table(results.scores, out / "scores.parquet")
write_table(results.drops(), out / "drops.parquet")
print(results.heuristics)
print(results.pretrained_vs_random("original"))
