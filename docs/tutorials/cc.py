"""The comparative correlative (Weissweiler et al. 2022): can a probe tell a CC from its reordering?

"The more you read, the more you learn" is a comparative correlative; the same words reordered
are not. lingprobe generates such minimal pairs from the paper's grammar, builds D_f for a
surface feature f (here the sentence length: train on its lowest quartile, test at every value),
and fits one logistic-regression probe per layer on mean-pooled sentence vectors. A probe that
generalises beyond the training lengths has found the construction, not the length.

Run: `python docs/tutorials/cc.py [OUT]` (default `tutorial-out/cc`). The sentences are
generated from word lists that ship with lingprobe; nothing is downloaded.
"""

import sys
from pathlib import Path

from internals import load_subject
from suites.cc import generate, probe_feature_subsets
from suites.outputs import write_table

out = Path(sys.argv[1] if len(sys.argv) > 1 else "tutorial-out/cc")

# Two minimal pairs: a CC instance (label 1) and its reordering (label 0).
print(generate(2, seed=0).select("sentence", "label", "length"))

minilm = load_subject("minilm")
per_layer, per_value = probe_feature_subsets(
    minilm, ["length"], n_per_value=6, seeds=(0,), store=out / "store", progress=False
)
write_table(per_layer, out / "syntax_layers.parquet")  # accuracy per layer
write_table(per_value, out / "syntax_values.parquet")  # accuracy per layer and length
print(per_layer.select("feature", "layer", "accuracy"))
