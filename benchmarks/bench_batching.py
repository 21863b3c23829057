"""The token-budget batcher against fixed 64-text batches: padding on EWT, time and peak memory.

Padding waste is padded tokens / real tokens over every batch. "unsorted 64" is what a plain loop
over the data does, "sorted 64" lingprobe's batches before the token budget, "token budget" now.
"""

from __future__ import annotations

import numpy as np
import pytest
from transformers import AutoTokenizer

from benchmarks.ewt_sample import sentences, word_items
from benchmarks.extract_common import fresh_process, load, median_of
from benchmarks.figures import Figures
from internals import load_subject, sites
from internals.batching import (
    DEFAULT_BATCH_TOKENS,
    budget_batches,
    length_buckets,
    padded_tokens,
)
from internals.packaged import MINILM, SMOLLM2, packaged_path

N_SENTENCES = 128
BUDGETS = sorted({2048, DEFAULT_BATCH_TOKENS["cpu"], 8192, 32768})


def waste(lengths: np.ndarray, batches: list[np.ndarray]) -> float:
    return sum(padded_tokens(lengths, b) for b in batches) / int(lengths.sum())


@pytest.mark.quick
@pytest.mark.needs_data
@pytest.mark.parametrize("split", ["train", "dev"])
def test_padding_waste_on_ewt(figures: Figures, split: str) -> None:
    texts = [s.text for s in sentences(None, split)]
    budget = DEFAULT_BATCH_TOKENS["cpu"]
    print(f"\n[batching] EWT {split}, {len(texts)} sentences, padded / real tokens (batches)")
    wastes = {}
    for name in (MINILM, SMOLLM2):
        tokenizer = AutoTokenizer.from_pretrained(packaged_path(name) or name)
        lengths = np.array([len(ids) for ids in tokenizer(texts)["input_ids"]])
        unsorted = [np.arange(i, min(i + 64, len(lengths))) for i in range(0, len(lengths), 64)]
        fixed = list(length_buckets(lengths.tolist(), 64, budget))
        planned = budget_batches(lengths, budget)
        print(
            f"  {name.split('/')[-1]:<24} unsorted 64: {waste(lengths, unsorted):.4f}"
            f" ({len(unsorted)})   sorted 64 (before): {waste(lengths, fixed):.4f} ({len(fixed)})"
            f"   token budget {budget} (after): {waste(lengths, planned):.4f} ({len(planned)})"
        )
        short = name.split("/")[-1]
        wastes[short] = {"unsorted_64": waste(lengths, unsorted), "budget": waste(lengths, planned)}
    worst = max(wastes.values(), key=lambda w: w["budget"] / w["unsorted_64"])
    figures.record(
        ratio=worst["budget"] / worst["unsorted_64"],
        against="unsorted batches of 64 texts (padding waste, the worse of the two tokenizers)",
        at_most=1.0,
        padding_waste=wastes,
    )


@pytest.mark.full
def test_smollm2_token_budget_vs_fixed_batches(figures: Figures) -> None:
    items = word_items(N_SENTENCES)
    subject = load_subject(SMOLLM2)
    every = sites.every_layer(subject)

    def run(batch_size: int | None, budget: int) -> float:
        subject.batch_size, subject.batch_tokens = batch_size, budget
        return median_of(lambda: subject.features(items, every, progress=False), rounds=1)

    default = DEFAULT_BATCH_TOKENS["cpu"]
    t_fixed = run(64, default)
    timed = {budget: run(None, budget) for budget in BUDGETS}
    subject.batch_size, subject.batch_tokens = None, default
    memory = {kind: fresh_process("batcher", kind) for kind in ("fixed", "budget")}
    print(
        f"\n[batching] SmolLM2-135M, {N_SENTENCES} EWT sentences, {len(items)} word items,"
        f" {len(every)} sites ({load()})"
    )
    print(f"  fixed 64-text batches      {t_fixed:7.2f} s")
    for budget, seconds in timed.items():
        mark = " (default)" if budget == default else ""
        speed = f"{t_fixed / seconds:.2f}x fixed{mark}"
        print(f"  token budget {budget:<6}       {seconds:7.2f} s   {speed}")
    fixed, budget = memory["fixed"], memory["budget"]
    print(
        f"  peak RSS increase, fresh process: fixed {fixed['peak_mib']:.0f} MiB"
        f" ({fixed['seconds']:.1f} s), token budget {budget['peak_mib']:.0f} MiB"
        f" ({budget['seconds']:.1f} s)"
    )
    figures.record(
        ratio=t_fixed / timed[default],
        against="fixed batches of 64 texts (wall time, SmolLM2-135M)",
        at_least=1.0,
        times={"fixed_64": t_fixed, **{f"budget_{b}": t for b, t in timed.items()}},
        peak_rss_mib=budget["peak_mib"],
        peak_rss_fixed_mib=fixed["peak_mib"],
    )
