"""Structural probes across languages (after Chi et al. 2020): is syntax in a multilingual model?

The same distance and depth probes as the structural tutorial, trained and tested separately on
UD treebanks of several languages and scripts, for one multilingual model and its random twin.
Each treebank is a registry dataset (`lingprobe data list`); its train file (its dev file where
lingprobe registers no train file) trains the probe and its test file scores it.

Run: `python docs/tutorials/multilingual.py [OUT] [MODEL] [DATA]`. MODEL is a hub id, e.g.
`bert-base-multilingual-cased` or `xlm-roberta-base` (default `minilm`, an English model that
stands in where no multilingual model is at hand, as in the test suite); DATA `samples` (default:
the French GSD sample and the whole Marathi UFAL treebank that ship with lingprobe, no network) or
`full` (the treebanks below, fetched once).
"""

import sys
from pathlib import Path

import polars as pl

from internals import load_subject, sites
from probes.structural import StructuralConfig
from suites.datasets import as_source
from suites.holmes.ud import split_keys
from suites.structural import StructuralSuiteConfig, by_layer, read_treebank, run_structural
from suites.structural.report import write_structural

out = Path(sys.argv[1] if len(sys.argv) > 1 else "tutorial-out/multilingual")
model = sys.argv[2] if len(sys.argv) > 2 else "minilm"
data = as_source(sys.argv[3] if len(sys.argv) > 3 else "samples")
treebanks = (
    ["ud-french-gsd", "ud-marathi-ufal"]
    if data.samples
    else [
        "ud-french-gsd",
        "ud-russian-gsd",
        "ud-persian-seraji",
        "ud-marathi-ufal",
        "ud-chinese-gsdsimp",
        "ud-korean-gsd",
    ]  # Latin, Cyrillic, Arabic, Devanagari, Han, Hangul
)
sentences = (40, 10, 20) if data.samples else (2000, 200, 500)  # train, dev, test

subject = load_subject(model)
twin = load_subject(model, init="random")
config = StructuralSuiteConfig(structural=StructuralConfig(epochs=2 if data.samples else 40))
layers = sites.select(subject, "0,-1")  # the embeddings and the last layer
tables = []
for treebank in treebanks:
    train_key, test_key = split_keys(data.dataset(treebank).keys())
    train_file = data.path(treebank, train_key)
    train = read_treebank(train_file, limit_sentences=sentences[0])
    dev = read_treebank(train_file, skip_sentences=sentences[0], limit_sentences=sentences[1])
    test = read_treebank(data.path(treebank, test_key), limit_sentences=sentences[2])
    tables.append(
        run_structural(
            [subject, twin],
            train,
            dev,
            test,
            layers,
            config,
            dataset=treebank,  # tasks read `ud-french-gsd:distance`, `ud-french-gsd:depth`
            store=out / "store",
            progress=False,
        )
    )

rows = pl.concat(tables)
write_structural(rows, out)  # OUT/structural.parquet and the per-layer plots
uuas = by_layer(rows).filter(pl.col("metric") == "uuas")
print(uuas.pivot(on="init", index=["task", "layer"], values="value"))
