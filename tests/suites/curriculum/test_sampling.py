"""Stratified dev carve-outs, nested N-per-label subsamples, folds; held-out probe outputs."""

from __future__ import annotations

import torch

from probes import ProbeGrid, TrainConfig, fit_probes
from suites.curriculum.probe_outputs import probe_probabilities, subset_metrics
from suites.curriculum.sampling import carve_dev, per_label_subsample, stratified_folds

TARGETS = torch.arange(3).repeat(100)  # 300 items, 100 per label


def test_per_label_subsamples_are_exact_and_nested():
    codes = torch.zeros(300, dtype=torch.int64)
    codes[:30] = 1
    codes[-60:] = 2
    small = per_label_subsample(codes, TARGETS, 10, seed=3)
    large = per_label_subsample(codes, TARGETS, 50, seed=3)
    per_label_small = torch.bincount(TARGETS[small == 0], minlength=3)
    per_label_large = torch.bincount(TARGETS[large == 0], minlength=3)
    assert per_label_small.tolist() == [10, 10, 10]
    assert per_label_large.tolist() == [50, 50, 50]
    assert bool(((small == 0) <= (large == 0)).all())  # 10 per label is inside 50 per label
    assert torch.equal(small[codes != 0], codes[codes != 0])  # dev and test untouched
    assert not torch.equal(small, per_label_subsample(codes, TARGETS, 10, seed=4))
    capped = per_label_subsample(codes, TARGETS, 1000, seed=0)
    assert torch.equal(capped == 0, codes == 0)


def test_folds_and_dev_carve_are_stratified():
    among = torch.arange(300) >= 30
    fold = stratified_folds(TARGETS, among, 5, seed=0)
    assert bool((fold[:30] == -1).all())
    counts = torch.stack([torch.bincount(TARGETS[fold == f], minlength=3) for f in range(5)])
    assert int(counts.max() - counts.min()) <= 1
    codes = carve_dev(among, TARGETS, 0.1, seed=0, test=~among)
    assert torch.bincount(TARGETS[codes == 1]).tolist() == [9, 9, 9]
    assert bool((codes[:30] == 2).all()) and int((codes == 0).sum()) == 243


def test_probe_probabilities_reproduce_fit_probes_metrics():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(300, 2, 6, generator=gen)
    x[:, 1, :3] += torch.nn.functional.one_hot(TARGETS, 3).float() * 2
    codes = torch.zeros(300, dtype=torch.int64)
    codes[200:240], codes[240:] = 1, 2
    for grid in (ProbeGrid(seeds=(0, 1)), ProbeGrid(seeds=(0,), kind="mlp", hidden=16)):
        result = fit_probes(x, TARGETS, codes, grid, TrainConfig(epochs=3), progress=False)
        test = codes == 2
        probs = probe_probabilities(result, x[test])
        assert torch.allclose(probs.sum(-1), torch.ones(probs.shape[:2], dtype=probs.dtype))
        ours = subset_metrics(probs, TARGETS[test], torch.ones(int(test.sum())))["accuracy"]
        table = result.table().filter(split="test", metric="accuracy")
        theirs = (
            result.probes.join(table, left_on=["site", "seed"], right_on=["site_index", "seed"])
            .sort("probe")["value"]
            .to_numpy()
        )
        assert torch.allclose(ours, torch.tensor(theirs), atol=1e-9)
