"""Control tasks (Hewitt & Liang 2019) and selectivity."""

from __future__ import annotations

import math

import pytest
import torch

from probes import ProbeGrid, TrainConfig, control_labels, fit_probes, random_splits


def zipf_labels(n: int, k: int, seed: int) -> torch.Tensor:
    weights = 1 / torch.arange(1, k + 1, dtype=torch.float64)
    return torch.multinomial(
        weights, n, replacement=True, generator=torch.Generator().manual_seed(seed)
    )


def test_a_type_always_gets_the_same_label() -> None:
    gen = torch.Generator().manual_seed(0)
    types = torch.randint(0, 50, (1000,), generator=gen)
    labels = zipf_labels(1000, 6, 1)  # labels vary within a type: the control must not
    for seed in range(3):
        control = control_labels(labels, types, seed)
        for t in types.unique():
            assert control[types == t].unique().numel() == 1
    assert not torch.equal(control_labels(labels, types, 0), control_labels(labels, types, 1))
    assert torch.equal(control_labels(labels, types, 2), control_labels(labels, types, 2))


def test_label_frequencies_match_the_empirical_distribution() -> None:
    n_types, per_type, k = 3000, 3, 5
    types = torch.arange(n_types).repeat_interleave(per_type)
    labels = zipf_labels(n_types * per_type, k, 2)
    expected = torch.bincount(labels, minlength=k).double() / labels.numel()
    control = control_labels(labels, types, 0)
    observed = torch.bincount(control, minlength=k).double() / control.numel()
    sigma = (expected * (1 - expected) / n_types).sqrt()  # one draw per type
    assert bool(((observed - expected).abs() < 4 * sigma).all()), (observed, expected)


def test_without_keys_labels_are_shuffled() -> None:
    labels = zipf_labels(500, 7, 3)
    control = control_labels(labels, None, 4)
    assert torch.equal(torch.bincount(control, minlength=7), torch.bincount(labels, minlength=7))
    assert (control != labels).float().mean() > 0.3


def test_multilabel_and_regression_controls_copy_whole_rows_per_type() -> None:
    types = torch.tensor([0, 1, 0, 2, 1, 0])
    rows = torch.tensor([[1, 0], [0, 1], [1, 1], [0, 0], [1, 0], [0, 1]], dtype=torch.float32)
    control = control_labels(rows, types, 0)
    assert torch.equal(control[0], control[2]) and torch.equal(control[0], control[5])
    assert all(any(torch.equal(c, r) for r in rows) for c in control)
    values = torch.arange(6, dtype=torch.float32)
    assert control_labels(values, types, 1)[[0, 2, 5]].unique().numel() == 1


def test_selectivity_is_near_zero_when_task_labels_are_random() -> None:
    """Task labels are themselves a random label per type: probes memorise types equally well
    for the task and the control, so selectivity ~ 0 although both beat chance."""
    gen = torch.Generator().manual_seed(0)
    n, n_types, dim, k = 900, 30, 24, 3
    types = torch.randint(0, n_types, (n,), generator=gen)
    embedding = torch.randn(n_types, dim, generator=gen) * 1.5
    feats = (embedding[types] + torch.randn(n, dim, generator=gen))[:, None, :]
    task = torch.randint(0, k, (n_types,), generator=gen)[types]
    config = TrainConfig(epochs=6, batch_size=32, lr=1e-2)
    res = fit_probes(
        feats, task, random_splits(n), ProbeGrid(control=True), config, keys=types, progress=False
    )
    sel = res.selectivity().filter(split="test", metric="accuracy")
    summary = res.summary().filter(split="test", metric="accuracy", variant="task")
    assert summary["mean"][0] > 1 / k + 0.3  # the task is learnt (by memorising types)
    standard_error = sel["selectivity_std"][0] / math.sqrt(5)
    assert abs(sel["selectivity"][0]) < max(0.05, 3 * standard_error)
    assert sel["task"][0] - sel["control"][0] == pytest.approx(sel["selectivity"][0])
