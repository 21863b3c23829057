"""Attention heads as sites: which of SmolLM2's heads carry a word's part of speech?

Each head's output (before the attention's output projection mixes the heads) is a site of its
own, `decoder.L.head.H`, 64 values wide in SmolLM2-135M. A linear probe per head at one layer
predicts each word's UPOS tag from the head's output mean-pooled over the word's tokens; the
residual stream at the same layer is probed beside them for scale.

Run: `python docs/tutorials/heads.py [OUT]` (default `tutorial-out/heads`). It reads the UD
English EWT sample that ships with lingprobe (no network) and SmolLM2, which ships offline.
"""

import sys
from pathlib import Path

import polars as pl
import torch

from internals import Site, load_subject, sites
from probes import ProbeGrid, TrainConfig, fit_probes
from suites.datasets import DataSource
from suites.edge import read_conllu
from suites.outputs import write_table
from suites.tasks import Task

out = Path(sys.argv[1] if len(sys.argv) > 1 else "tutorial-out/heads")
out.mkdir(parents=True, exist_ok=True)
LAYER = 6  # block 5's attention; heads exist at layers 1..30

# 1. Data: UPOS of every word of a few sentences of the shipped EWT sample.
samples = DataSource(samples=True)
train = read_conllu(samples.path("ud-english-ewt", "train"), "upos", limit_sentences=30)
test = read_conllu(samples.path("ud-english-ewt", "dev"), "upos", split="test", limit_sentences=10)
task = Task.combine(train.carve_dev(0.1), test)  # a tenth of train picks the best epoch

# 2. Sites: the 9 heads of one layer, and the residual stream there (576 wide) for scale.
subject = load_subject("smollm2")
heads = sites.every_head(subject, layers=[LAYER])
print([site.name for site in heads])  # decoder.6.head.0 ... decoder.6.head.8
head_feats = subject.features(task.items(), heads, store=out / "store", progress=False)
residual = subject.features(
    task.items(), [Site("decoder", LAYER)], store=out / "store", progress=False
)

# 3. Probes: one batched optimisation over the heads; the residual site in its own.
grid, config = ProbeGrid(seeds=(0,)), TrainConfig(epochs=20)
names = [site.name for site in heads]
per_head = fit_probes(
    head_feats, task.targets, task.splits, grid, config, site_names=names, progress=False
)
whole = fit_probes(
    residual, task.targets, task.splits, grid, config, site_names=[f"decoder.{LAYER}"],
    progress=False,
)  # fmt: skip

# 4. Table: test accuracy per head, then the residual stream's.
table = pl.concat([per_head.table(), whole.table()])
accuracy = table.filter(split="test", metric="accuracy").select("site", "value")
write_table(accuracy, out / "heads.parquet")
print(accuracy)
assert bool(torch.isfinite(head_feats).all())  # [item, 9 heads, 64]
