"""Probe your own model on your own data: a hub id or folder, a labelled file, sites, a sweep.

Any Hugging Face model (a hub id, a local folder, or a model object you built) becomes a
`Subject`; any Hugging Face dataset, or a local parquet / CSV / JSON-lines file, becomes a `Task`
with `Task.from_hf` (`pip install lingprobe[hf]`). Features of the chosen sites go to
`fit_probes`, which trains every probe (sites x seeds x task/control) in one optimisation.
The same model can then join a sweep over several suites, written as a TOML file.

Run: `python docs/tutorials/own_model.py [OUT]` (default `tutorial-out/own-model`). The labelled
file is written by the script itself; the model is MiniLM, which ships offline.
"""

import sys
from pathlib import Path

import polars as pl

from internals import load_subject, sites
from probes import ProbeGrid, TrainConfig, fit_probes
from suites.outputs import write_table
from suites.sweep import run_sweep
from suites.tasks import Task

out = Path(sys.argv[1] if len(sys.argv) > 1 else "tutorial-out/own-model")
out.mkdir(parents=True, exist_ok=True)

# 1. Your data: a CSV with a text column, a label column and (optionally) a split column.
nouns = ["cat", "dog", "bird", "horse", "child", "teacher", "farmer", "sailor", "poet", "baker"]
parts = ["train"] * 6 + ["dev"] * 2 + ["test"] * 2
rows = [(f"The {noun} sleeps.", "singular", part) for noun, part in zip(nouns, parts)]
rows += [(f"The {noun}s sleep.", "plural", part) for noun, part in zip(nouns, parts)]
table = pl.DataFrame(rows, schema=["sentence", "number", "part"], orient="row")
table.write_csv(out / "number.csv")
task = Task.from_hf(out / "number.csv", text="sentence", label="number", split_column="part")

# 2. Your model: a hub id ("bert-base-uncased"), a local folder, or a model object.
subject = load_subject("sentence-transformers/all-MiniLM-L6-v2")

# 3. Sites: "0,6", "last", "all", or Site objects; features are [item, site, dim].
chosen = sites.select(subject, "0,6")
feats = subject.features(task.items(), sites=chosen, store=out / "store", progress=False)

# 4. Probes: one batched optimisation over sites x seeds x task/control.
grid = ProbeGrid(seeds=(0,), control=True)
names = [s.name for s in chosen]  # the table's `site` column; `site_index` is the position
result = fit_probes(
    feats,
    task.targets,
    task.splits,
    grid,
    TrainConfig(epochs=2),
    keys=task.keys,
    site_names=names,
    progress=False,
)
write_table(result.table(), out / "probes.parquet")
print(result.table().filter(split="test", metric="accuracy"))

# 5. A sweep: models x suites in one TOML file, resumable; one leaderboard at the end.
sweep = out / "sweep.toml"
sweep.write_text(f"""
[sweep]
out = "{(out / "sweep").as_posix()}"
data = "samples"

[[models]]
name = "minilm"
init = ["pretrained", "random"]

[[suites]]
suite = "holmes"
tasks = ["blimp-causative"]
limits = {{blimp_pairs = 30}}

[probe]
seeds = 1
epochs = 2
""")
summary = run_sweep(sweep, progress=False)
print(summary.leaderboard.select("model", "task", "metric", "score"))
