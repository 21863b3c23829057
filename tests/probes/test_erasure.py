"""LEACE against the concept-erasure package and its guarantee, INLP against a plain sequential
rendering of Ravfogel et al.'s algorithm (scikit-learn classifiers, scipy's orth), the random
control, and erase-then-probe."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import torch
from concept_erasure import LeaceFitter
from sklearn.linear_model import LogisticRegression

from probes import ProbeGrid, ProbeInputError, TrainConfig, fit_logistic_regression
from probes.erasure import AffineEraser, erase_then_probe, fit_inlp, fit_leace, random_eraser


def concept_data(n: int = 3000, sites: int = 3, dim: int = 12, classes: int = 4, seed: int = 0):
    """Features whose class means differ (more at later sites), with correlated noise, and a
    second label (the 'task') that depends on other directions."""
    gen = torch.Generator().manual_seed(seed)
    z = torch.multinomial(torch.tensor([0.4, 0.3, 0.2, 0.1])[:classes], n, True, generator=gen)
    task = torch.randint(0, 3, (n,), generator=gen)
    mix = torch.randn(dim, dim, generator=gen) / dim**0.5 + torch.eye(dim)
    feats = torch.randn(n, sites, dim, generator=gen) @ mix + 0.5
    means = torch.randn(classes, dim, generator=gen)
    task_dirs = torch.randn(3, dim, generator=gen)
    for s in range(sites):
        feats[:, s] += (s + 1) * means[z] + 2 * task_dirs[task]
    return feats.double(), z, task


def test_leace_equals_the_concept_erasure_package() -> None:
    feats, z, _ = concept_data()
    eraser = fit_leace(feats, z)
    erased = eraser(feats)
    onehot = torch.nn.functional.one_hot(z).double()
    for s in range(feats.shape[1]):
        ref = LeaceFitter.fit(
            feats[:, s], onehot, shrinkage=False, constrain_cov_trace=False, svd_tol=1e-6
        ).eraser
        torch.testing.assert_close(erased[:, s], ref(feats[:, s]), atol=1e-9, rtol=1e-9)
    assert eraser.ranks.tolist() == [3, 3, 3]  # k - 1 directions per site


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_leace_leaves_no_linear_information(dtype: torch.dtype) -> None:
    feats, z, _ = concept_data(n=4000)
    train, test = slice(0, 3000), slice(3000, None)
    eraser = fit_leace(feats[train].to(dtype), z[train])
    erased = eraser(feats.to(dtype)).double()
    zc = torch.nn.functional.one_hot(z[train]).double()
    zc -= zc.mean(0)
    for s in range(feats.shape[1]):
        x = erased[train, s] - erased[train, s].mean(0)
        assert float((x.T @ zc / (len(zc) - 1)).abs().max()) < 1e-5
    majority = float(torch.bincount(z[test]).max()) / len(z[test])
    before = fit_logistic_regression(feats[train].transpose(0, 1), z[train].expand(3, -1))
    after = fit_logistic_regression(erased[train].transpose(0, 1), z[train].expand(3, -1))
    acc_before = before.score(feats[test].transpose(0, 1), z[test].expand(3, -1))
    acc_after = after.score(erased[test].transpose(0, 1), z[test].expand(3, -1))
    assert bool((acc_before > majority + 0.2).all())  # the concept was linearly there
    assert bool(((acc_after - majority).abs() <= 0.01).all()), (acc_after, majority)


def sequential_inlp(x, z, train, dev, iterations, margin, C):
    """Ravfogel et al. 2020 (debias.py), one site: sklearn classifiers, scipy orth (of the
    classifier's centred rows: the softmax's identified directions)."""
    d = x.shape[1]
    majority = np.bincount(z[dev]).max() / len(dev)
    spaces, proj = [], np.eye(d)
    for _ in range(iterations):
        clf = LogisticRegression(C=C, tol=1e-8, max_iter=2000)
        clf.fit(x[train] @ proj, z[train])
        if clf.score(x[dev] @ proj, z[dev]) <= majority + margin:
            break
        rows = clf.coef_ if len(clf.coef_) == 1 else clf.coef_ - clf.coef_.mean(0)
        basis = scipy.linalg.orth(rows.T)
        spaces.append(basis @ basis.T)
        proj = np.eye(d) - (lambda q: q @ q.T)(scipy.linalg.orth(sum(spaces)))
    return proj, len(spaces)


def test_inlp_equals_a_plain_sequential_implementation() -> None:
    feats, z, _ = concept_data(n=900, dim=8)
    codes = torch.zeros(900, dtype=torch.long)
    codes[600:] = 1
    got = fit_inlp(feats, z, codes, iterations=6, margin=0.01, tol=1e-8, max_iter=2000)
    projections = got.eraser.projection()
    for s in range(feats.shape[1]):
        want, removed = sequential_inlp(
            feats[:, s].numpy(), z.numpy(), np.arange(600), np.arange(600, 900), 6, 0.01, 1.0
        )
        assert int(got.history.filter(site=s)["removed"].sum()) == removed
        np.testing.assert_allclose(projections[s].numpy(), want, atol=1e-4)
    assert got.history.filter(removed=True)["rank"].max() > 0
    erased = got.eraser(feats)
    after = fit_logistic_regression(erased[:600].transpose(0, 1), z[:600].expand(3, -1))
    majority = float(torch.bincount(z[600:]).max()) / 300
    dev_acc = after.score(erased[600:].transpose(0, 1), z[600:].expand(3, -1))
    assert bool((dev_acc <= majority + 0.05).all()), (dev_acc, majority)


def test_random_eraser_is_an_orthogonal_projection_of_equal_rank() -> None:
    feats, z, _ = concept_data(n=500)
    leace = fit_leace(feats, z)
    control = random_eraser(leace, seed=3)
    assert control.ranks.tolist() == leace.ranks.tolist()
    p = control.projection()
    torch.testing.assert_close(p @ p, p)
    torch.testing.assert_close(p, p.transpose(1, 2))
    eye = torch.eye(feats.shape[2], dtype=torch.float64)
    assert [round(float(torch.trace(eye - m))) for m in p] == leace.ranks.tolist()
    torch.testing.assert_close(random_eraser(leace, seed=3).left, control.left)
    hidden = feats[:7, 1].float()
    torch.testing.assert_close(leace.site(1)(hidden), leace(feats)[:7, 1].float())


def test_erase_then_probe_loses_the_concept_not_the_task() -> None:
    feats, z, task = concept_data(n=2400, dim=12)
    codes = torch.zeros(2400, dtype=torch.long)
    codes[1600:2000] = 1
    codes[2000:] = 2
    train = codes == 0
    leace = fit_leace(feats[train], z[train])
    erasers = {"leace": leace, "random": random_eraser(leace)}
    config = TrainConfig(epochs=10, lr=0.02, dropout=0.0)
    grid = ProbeGrid(seeds=(0,))
    concept = erase_then_probe(feats.float(), z, codes, erasers, grid, config, progress=False)
    kept = erase_then_probe(feats.float(), task, codes, erasers, grid, config, progress=False)
    assert concept.columns[:2] == ["eraser", "site"]

    def acc(table, eraser):
        rows = table.filter(eraser=eraser, split="test", metric="accuracy")
        return rows.sort("site_index")["value"].to_list()

    majority = float(torch.bincount(z[codes == 2]).max()) / int((codes == 2).sum())
    assert all(a > majority + 0.2 for a in acc(concept, "none"))
    assert all(a <= majority + 0.02 for a in acc(concept, "leace"))
    assert all(a > majority + 0.1 for a in acc(concept, "random"))
    assert all(a > 0.9 for a in acc(kept, "leace"))


def test_erasers_refuse_mismatched_input() -> None:
    feats, z, _ = concept_data(n=200)
    eraser = fit_leace(feats, z)
    with pytest.raises(ProbeInputError, match="multiple of 12"):
        eraser(feats[:, :, :5])
    with pytest.raises(ProbeInputError, match="reserved"):
        erase_then_probe(feats.float(), z, torch.zeros(200), {"none": eraser})
    with pytest.raises(ProbeInputError, match="class ids"):
        fit_leace(feats, z - 1)
    assert isinstance(eraser, AffineEraser)
