"""The opt-in bfloat16 compute mode on real features: MiniLM word features of templated sentences
whose ambiguous words (noun or verb by position) need context, at every layer."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
import torch

from internals import SpanItem
from probes import ProbeGrid, TrainConfig, fit_probes, random_splits

pytestmark = pytest.mark.slow

WORDS = {
    "DET": ["the", "a", "every", "this"],
    "ADJ": ["small", "green", "quiet", "old", "bright"],
    "NOUN": ["dog", "teacher", "city", "river", "book", "watch", "play", "walk"],
    "VERB": ["saw", "likes", "found", "book", "watch", "play", "walk"],
    "ADV": ["today", "again", "slowly", "often"],
}
TEMPLATES = (  # positions vary, so only the context tells an ambiguous word's role
    ("DET", "ADJ", "NOUN", "VERB", "DET", "NOUN", "ADV"),
    ("DET", "NOUN", "VERB", "DET", "ADJ", "ADJ", "NOUN"),
    ("ADV", "DET", "NOUN", "VERB", "DET", "NOUN"),
    ("DET", "ADJ", "ADJ", "NOUN", "ADV", "VERB", "DET", "NOUN"),
)
CLASSES = list(WORDS)


def tagged_items(n_sentences: int, seed: int = 0) -> tuple[list[SpanItem], torch.Tensor]:
    rng = random.Random(seed)
    items, labels = [], []
    for _ in range(n_sentences):
        template = rng.choice(TEMPLATES)
        words = [rng.choice(WORDS[tag]) for tag in template]
        text, start = " ".join(words), 0
        for word, tag in zip(words, template):
            items.append(SpanItem(text, spans=((start, start + len(word)),)))
            labels.append(CLASSES.index(tag))
            start += len(word) + 1
    return items, torch.tensor(labels)


def test_bfloat16_metrics_within_half_a_point_of_float32(minilm) -> None:
    items, labels = tagged_items(300)
    feats = minilm.features(items, progress=False)  # [item, 7 sites, 384]
    splits = random_splits(len(items), seed=1)
    grid = ProbeGrid(seeds=[0, 1])
    config = TrainConfig(epochs=10, lr=2e-3)
    tables = {
        compute: fit_probes(
            feats, labels, splits, grid, replace(config, compute=compute), progress=False
        ).table()
        for compute in ("float32", "bfloat16")
    }
    for metric in ("accuracy", "macro_f1"):
        means = {
            c: float(t.filter(split="test", metric=metric)["value"].mean())
            for c, t in tables.items()
        }
        assert abs(means["float32"] - means["bfloat16"]) <= 0.005, (metric, means)
    # the context matters (layer 0 cannot tell the verb 'walk' from the noun 'walk')
    site_acc = tables["float32"].filter(split="test", metric="accuracy", seed=0).sort("site")
    assert site_acc["value"][0] < site_acc["value"].max() - 0.02
