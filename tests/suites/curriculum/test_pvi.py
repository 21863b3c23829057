"""PVI and V-information against hand computations; the cross-fitted pipeline on toy features."""

from __future__ import annotations

import math

import pytest
import torch

from internals import Site
from suites.curriculum import (
    CurriculumConfig,
    NLIFeatures,
    difficulty_halves,
    label_prior,
    pointwise_v_information,
    pvi_scores,
    v_information,
    v_information_table,
)
from suites.suite import with_probe
from suites.tasks import Task, make_frame


def test_pvi_and_v_information_by_hand():
    train_labels = torch.tensor([0, 0, 0, 1])
    prior = label_prior(train_labels, 2)
    assert prior.tolist() == [0.75, 0.25]
    probs = torch.tensor([[0.9, 0.1], [0.5, 0.5], [0.2, 0.8], [0.6, 0.4]])
    gold = torch.tensor([0, 0, 1, 1])
    pvi = pointwise_v_information(probs, gold, prior)
    by_hand = [
        -math.log2(0.75) + math.log2(0.9),  # 0.263034
        -math.log2(0.75) + math.log2(0.5),  # -0.584963
        -math.log2(0.25) + math.log2(0.8),  # 1.678072
        -math.log2(0.25) + math.log2(0.4),  # 0.678072
    ]
    assert pvi.tolist() == pytest.approx(by_hand, abs=1e-6)
    assert pvi.tolist() == pytest.approx([0.263034, -0.584963, 1.678072, 0.678072], abs=1e-6)
    assert float(v_information(pvi)) == pytest.approx(0.508554, abs=1e-6)
    stacked = pointwise_v_information(torch.stack([probs, probs.flip(-1)]), gold, prior)
    assert stacked.shape == (2, 4) and torch.allclose(stacked[0], pvi)
    assert difficulty_halves(pvi) == ["hard", "hard", "simple", "simple"]


def test_halves_odd_count_ties_and_zero_prior():
    assert difficulty_halves(torch.tensor([0.0, 1.0, 0.5, 1.0, -1.0])) == [
        "hard",
        "simple",
        "simple",
        "simple",
        "hard",
    ]
    assert difficulty_halves(torch.tensor([0.2, 0.2])) == ["simple", "hard"]
    with pytest.raises(ValueError, match="zero prior"):
        pointwise_v_information(
            torch.tensor([[0.5, 0.5]]), torch.tensor([1]), torch.tensor([1.0, 0])
        )


def _toy(n_per_class: int, separable: bool, seed: int = 0) -> tuple[Task, NLIFeatures]:
    gen = torch.Generator().manual_seed(seed)
    labels = torch.arange(3).repeat_interleave(n_per_class)
    n = labels.numel()
    split = ["test" if i % 4 == 0 else "train" for i in range(n)]
    names = ("entailment", "neutral", "contradiction")
    rows = [
        {"text": f"p{i}", "text_pair": f"h{i}", "label": names[int(y)], "split": s}
        for i, (y, s) in enumerate(zip(labels, split))
    ]
    task = Task("toy", make_frame(rows, "classification"), labels=names, phenomenon="toy")
    noise = torch.randn(n, 1, 8, generator=gen)
    signal = torch.nn.functional.one_hot(labels, 8).float()[:, None] * 4.0
    premise = noise + (signal if separable else 0)
    return task, NLIFeatures(premise, torch.randn(n, 1, 8, generator=gen), (Site("encoder", 6),))


def test_pvi_pipeline_on_toy_features():
    config = with_probe(CurriculumConfig(pvi_folds=2), seeds=(0,), epochs=20, lr=0.05)
    task, feats = _toy(80, separable=True)
    table = pvi_scores(task, feats, config, progress=False)
    assert table.height == len(task)
    assert set(table["fold"].unique()) == {-1, 0, 1}
    assert (table["pvi"] - (table["log2_px"] - table["log2_prior"])).abs().max() < 1e-9
    vinfo = v_information_table(table).filter(split="test")["v_information"][0]
    assert 1.2 < vinfo <= math.log2(3)  # separable: close to H(Y) = log2 3 bits
    for split in ("train", "test"):
        part = table.filter(split=split)
        counts = dict(part.group_by("difficulty").len().iter_rows())
        assert abs(counts["simple"] - counts["hard"]) <= 1
        assert (
            part.filter(difficulty="simple")["pvi"].min()
            >= part.filter(difficulty="hard")["pvi"].max()
        )
    noise_task, noise = _toy(80, separable=False)
    noisy = pvi_scores(noise_task, noise, config, progress=False)
    assert v_information_table(noisy).filter(split="test")["v_information"][0] < 0.2
    per_label = pvi_scores(
        noise_task,
        noise,
        with_probe(CurriculumConfig(pvi_folds=2, halves="per_label"), seeds=(0,), epochs=2),
        progress=False,
    )
    balance = per_label.filter(split="train").group_by("label", "difficulty").len()
    assert balance["len"].max() - balance["len"].min() <= 1
