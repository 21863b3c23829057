"""Holmes and FlashHolmes: rank models by their probes on many datasets, then on 1/k of the data.

Holmes (Waldis et al. 2024) probes the last layer of every model on every dataset and ranks
models by their mean winning rate (the share of other models each beats, averaged over
datasets). FlashHolmes trains the same probes on a fraction of the training instances and asks
how well that cheaper benchmark keeps the ranking (rank resolution).

Run: `python docs/tutorials/holmes.py [OUT]` (default `tutorial-out/holmes`). It uses the BLiMP
and UD English EWT samples that ship with lingprobe and three small models: MiniLM, its random
twin (`minilm@random`) and GloVe 6B 50d.
"""

import sys
from pathlib import Path

import polars as pl

from suites.holmes import HolmesConfig, available_tasks, run_holmes
from suites.suite import Limits, with_probe

out = Path(sys.argv[1] if len(sys.argv) > 1 else "tutorial-out/holmes")

# The tasks the shipped samples offer (the full registry offers every BLiMP paradigm and more).
print(available_tasks("samples"))
tasks = ["blimp-causative", "blimp-adjunct_island", "upos"]

# Small limits, one seed, two epochs; train_fractions adds the FlashHolmes runs on 1/2 of train.
config = HolmesConfig(limits=Limits(blimp_pairs=40, sentences=40))
config = with_probe(config, seeds=(0,), epochs=2, train_fractions=(1.0, 0.5))

board = run_holmes(
    ["minilm", "minilm@random", "glove:6B.50d"],
    tasks,
    out,
    config=config,
    data="samples",
    progress=False,
)  # also writes OUT/results.parquet, OUT/leaderboard.parquet, rankings and plots

ranked = board.filter(ranked=True, fraction=1.0)
print(ranked.select("dataset", "model", "score").sort("dataset", "model"))

# Rankings (mean winning rate with its 95% bootstrap interval over datasets) and the FlashHolmes
# reliability-efficiency curve (rank resolution per train fraction).
print(pl.read_parquet(out / "ranking.parquet"))
print(pl.read_parquet(out / "flash.parquet"))
