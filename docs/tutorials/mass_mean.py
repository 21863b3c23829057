"""A mass-mean direction for a simple contrast on SmolLM2, and what adding it does.

Sentences that praise something and sentences that criticise it give, at each layer, the
difference of their mean residual states (Marks & Tegmark 2023). Mass-mean probes along that
direction are scored beside trained logistic probes; the direction of one layer, with its
provenance, is then added to the residual stream while SmolLM2 reads neutral text: the LM-loss
change and the change of the logit of " good" show what it does.

Run: `python docs/tutorials/mass_mean.py [OUT]` (default `tutorial-out/mass-mean`). SmolLM2
ships offline; the sentences are written by the script.
"""

import sys
from pathlib import Path

import polars as pl
import torch

from internals import SpanItem, load_subject, sites, steering_effect
from probes import ProbeGrid, TrainConfig, directions, fit_probes
from suites.outputs import write_table

out = Path(sys.argv[1] if len(sys.argv) > 1 else "tutorial-out/mass-mean")
out.mkdir(parents=True, exist_ok=True)

# 1. A contrast: the same templates with a positive or a negative judgement (label 1 / 0).
things = ["film", "meal", "hotel", "book", "concert", "service", "game", "song", "trip", "class"]
good = ["wonderful", "excellent", "delightful", "great", "lovely"]
bad = ["terrible", "awful", "dreadful", "horrible", "boring"]
texts, labels = [], []
for i, thing in enumerate(things):
    for j in range(len(good)):
        texts += [f"The {thing} was {good[(i + j) % 5]}.", f"The {thing} was {bad[(i + j) % 5]}."]
        labels += [1, 0]
y = torch.tensor(labels)
# split by the thing judged: 6 things train, 2 dev, 2 test (no template shared across splits)
splits = torch.tensor([0] * 60 + [1] * 20 + [2] * 20)

# 2. Features: the mean residual state of each sentence at four layers of SmolLM2.
subject = load_subject("smollm2", head="lm")
chosen = sites.select(subject, "4,10,16,22")
feats = subject.features([SpanItem(t) for t in texts], chosen, progress=False)
names = [s.name for s in chosen]

# 3. Mass-mean probes (closed form) beside logistic probes, test accuracy per layer.
scores = []
for kind in ("mass_mean", "linear"):
    grid = ProbeGrid(seeds=(0,), kind=kind)
    config = TrainConfig(epochs=60, batch_size=16)
    result = fit_probes(feats, y, splits, grid, config, site_names=names, progress=False)
    scores.append(result.table().filter(split="test").with_columns(kind=pl.lit(kind)))
table = pl.concat(scores)
write_table(table, out / "probes.parquet")
print(table.filter(metric="accuracy").pivot("kind", index="site", values="value"))

# 4. The direction of each layer, read on the training sentences, with its provenance.
train = (splits == 0).nonzero().flatten()
found = directions(
    feats, y, model=subject.content_key(), data="tutorial judgements", items=train, site_names=names
)
print(found.provenance.select("site_name", "norm", "n_positive", "n_negative", "model"))
write_table(found.frame(), out / "directions.parquet")

# 5. Steering: add alpha * direction at layer 10 while SmolLM2 reads neutral text.
neutral = ["The weather today is", "I went to the store and", "My neighbour told me that"]
site = chosen[1]
effect = steering_effect(
    subject,
    neutral,
    site,
    found.vector(site.name),
    alphas=(0.0, 2.0, 4.0),
    token=" good",
    progress=False,
)
write_table(effect, out / "steering.parquet")
print(effect.select("site_name", "alpha", "base_loss", "loss", "delta", "logit_delta"))
