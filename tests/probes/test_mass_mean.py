"""Mass-mean probes (`ProbeGrid(kind="mass_mean" | "mass_mean_iid")`) and `directions`:
against a numpy computation of the class means, scikit-learn's `LinearDiscriminantAnalysis`
(the IID variant), one-probe grids, and the metrics of their own predictions."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.metrics import accuracy_score, roc_auc_score

from lingprobe.feature_set import FeatureSet
from probes import (
    Directions,
    ProbeConfigError,
    ProbeGrid,
    ProbeInputError,
    TrainConfig,
    directions,
    fit_probes,
)
from probes.errors import ClassAbsentFromTrainWarning
from probes.splits import TEST, TRAIN


def toy(n: int = 400, classes: int = 2, sites: int = 2, dim: int = 5, offset: float = 0.0):
    """Class-shifted Gaussian features (balanced classes, a different covariance per site) and
    splits 60/20/20 in blocks of ten items."""
    gen = torch.Generator().manual_seed(0)
    labels = torch.arange(n) % classes
    mix = torch.randn(sites, dim, dim, generator=gen)
    noise = torch.einsum("nsd,sde->nse", torch.randn(n, sites, dim, generator=gen), mix)
    shift = torch.randn(classes, dim, generator=gen)
    feats = noise + shift[labels][:, None] + offset
    splits = torch.tensor(([0] * 6 + [1] * 2 + [2] * 2) * (n // 10))
    return feats, labels, splits


def numpy_mass_mean(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The paper's binary probe by hand: direction mu_1 - mu_0, threshold at the midpoint."""
    mu1, mu0 = x[y == 1].mean(0), x[y == 0].mean(0)
    return mu1 - mu0, (mu1 + mu0) / 2


@pytest.mark.parametrize("offset", [0.0, 300.0])
def test_binary_mass_mean_is_the_difference_of_means_at_the_midpoint(offset):
    feats, labels, splits = toy(offset=offset)
    result = fit_probes(feats, labels, splits, ProbeGrid(seeds=(0,), kind="mass_mean"))
    train = (splits == TRAIN).numpy()
    logits = result.logits(feats)  # [probe, item, class]
    for site in range(feats.shape[1]):
        x = feats[:, site].double().numpy()
        theta, mid = numpy_mass_mean(x[train], labels.numpy()[train])
        probe = result.probes.filter(site=site)["probe"].item()
        coef = result.coef_[probe].double()
        np.testing.assert_allclose((coef[1] - coef[0]).numpy(), theta, rtol=1e-5, atol=1e-5)
        want = (x - mid) @ theta  # the projection, thresholded at the midpoint
        got = (logits[probe, :, 1] - logits[probe, :, 0]).double().numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3 * np.abs(want).max())
        test = (splits == TEST).numpy()
        table = result.table().filter(site_index=site, split="test")
        accuracy = table.filter(metric="accuracy")["value"].item()
        assert accuracy == pytest.approx(accuracy_score(labels.numpy()[test], want[test] > 0))
        auroc = table.filter(metric="auroc")["value"].item()
        assert auroc == pytest.approx(roc_auc_score(labels.numpy()[test], want[test]), abs=1e-6)


@pytest.mark.parametrize("classes", [2, 3])
def test_iid_mass_mean_equals_linear_discriminant_analysis(classes):
    feats, labels, splits = toy(n=600, classes=classes)
    grid = ProbeGrid(seeds=(0,), kind="mass_mean_iid")
    result = fit_probes(feats, labels, splits, grid, progress=False)
    train = splits == TRAIN
    logits = result.logits(feats)
    for site in range(feats.shape[1]):
        x = feats[:, site].double().numpy()
        lda = LinearDiscriminantAnalysis(solver="lsqr").fit(x[train], labels[train].numpy())
        probe = result.probes.filter(site=site)["probe"].item()
        got = logits[probe].double().numpy()
        want = lda.decision_function(x)
        # equal priors (balanced classes): LDA's scores are these logits up to a constant per
        # item (binary: the logit difference)
        if classes == 2:
            got = got[:, 1] - got[:, 0]
        else:
            got, want = got - got.mean(1, keepdims=True), want - want.mean(1, keepdims=True)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


def test_multiclass_mass_mean_predicts_the_nearest_class_mean():
    feats, labels, splits = toy(classes=4)
    result = fit_probes(feats, labels, splits, ProbeGrid(seeds=(0,), kind="mass_mean"))
    train = splits == TRAIN
    pred = result.predict(feats)
    for site in range(feats.shape[1]):
        x = feats[:, site].double()
        means = torch.stack([x[train & (labels == c)].mean(0) for c in range(4)])
        nearest = torch.cdist(x, means).argmin(dim=1)
        probe = result.probes.filter(site=site)["probe"].item()
        assert torch.equal(pred[probe], nearest)


def test_every_probe_of_a_grid_equals_its_one_probe_grid():
    feats, labels, splits = toy(classes=3, sites=3)
    options = {"kind": "mass_mean_iid", "control": True, "train_fractions": (1.0, 0.5)}
    keys = torch.arange(len(labels)) % 17  # control-task types
    whole = fit_probes(feats, labels, splits, ProbeGrid(seeds=(0, 1), **options), keys=keys)
    assert whole.kind == "mass_mean_iid" and whole.probes["best_epoch"].is_null().all()
    for seed in (0, 1):
        alone = fit_probes(feats, labels, splits, ProbeGrid(seeds=(seed,), **options), keys=keys)
        rows = whole.probes.filter(seed=seed).sort("mask", "site", "variant", descending=True)
        mine = alone.probes.sort("mask", "site", "variant", descending=True)
        for name in ("coef", "intercept"):
            got = whole.weights[name][rows["probe"].to_list()]
            torch.testing.assert_close(got, alone.weights[name][mine["probe"].to_list()])
    # the half mask's probes train on fewer items: other weights than the whole train split
    half = whole.probes.filter(mask=0.5, seed=0, site=0, variant="task")["probe"].item()
    full = whole.probes.filter(mask=1.0, seed=0, site=0, variant="task")["probe"].item()
    assert not torch.allclose(whole.weights["coef"][half], whole.weights["coef"][full])


def test_a_feature_set_gives_the_tensor_results(tmp_path):
    feats, labels, splits = toy(classes=3, sites=3)
    stored = FeatureSet.write(tmp_path / "fs", [feats], ["a", "b", "c"])
    grid = ProbeGrid(seeds=(0,), kind="mass_mean")
    config = TrainConfig(memory=2 * feats[:, 0].numel() * 4)  # two sites at a time
    from_disk = fit_probes(stored, labels, splits, grid, config)
    in_memory = fit_probes(feats, labels, splits, grid)
    torch.testing.assert_close(from_disk.weights["coef"], in_memory.weights["coef"])
    assert from_disk.table()["site"].unique().sort().to_list() == ["a", "b", "c"]


def test_a_class_absent_from_a_train_mask_is_never_predicted():
    feats, labels, splits = toy(classes=3)
    mask = (splits == TRAIN) & (labels != 2)
    grid = ProbeGrid(seeds=(0,), kind="mass_mean", train_masks=mask[None])
    with pytest.warns(ClassAbsentFromTrainWarning):
        result = fit_probes(feats, labels, splits, grid)
    assert torch.isinf(result.intercept_[:, 2]).all()
    assert not (result.predict(feats) == 2).any()
    assert result.table().filter(metric="accuracy")["value"].is_finite().all()


def test_mass_mean_refuses_targets_without_classes_and_mdl():
    feats, labels, splits = toy()
    with pytest.raises(ProbeConfigError, match="kind='mass_mean' needs class ids"):
        fit_probes(feats, labels.float(), splits, ProbeGrid(seeds=(0,), kind="mass_mean"))
    with pytest.raises(ProbeConfigError, match="mdl=True"):
        fit_probes(feats, labels, splits, ProbeGrid(seeds=(0,), kind="mass_mean", mdl=True))


def test_directions_are_the_mean_difference_with_their_provenance():
    feats, labels, _ = toy(classes=3, sites=2)
    items = torch.arange(0, 300)
    found = directions(
        feats, labels, model="content-key", data="toy:train", items=items, positive=2, negative=0
    )
    assert isinstance(found, Directions) and found.vectors.shape == (2, 5)
    used = items[(labels[items] == 2) | (labels[items] == 0)]
    for site in range(2):
        x = feats[used, site].double().numpy()
        y = (labels[used] == 2).long().numpy()
        theta, _ = numpy_mass_mean(x, y)
        np.testing.assert_allclose(found.vector(site).double().numpy(), theta, rtol=1e-5)
    row = found.provenance.row(1, named=True)
    assert row["model"] == "content-key" and row["data"] == "toy:train"
    assert row["items"] == used.tolist() and row["n_positive"] == int((labels[used] == 2).sum())
    assert row["kind"] == "mass_mean" and row["norm"] == pytest.approx(
        float(found.vectors[1].norm())
    )
    assert found.frame()["direction"].to_list()[0] == pytest.approx(found.vectors[0].tolist())
    other = directions(feats + 1e-3, labels, model="content-key", data="toy:train")
    assert other.provenance["features"][0] != found.provenance["features"][0]


def test_iid_direction_is_the_difference_of_the_iid_probe_rows(tmp_path):
    feats, labels, splits = toy()
    grid = ProbeGrid(seeds=(0,), kind="mass_mean_iid")
    train = (splits == TRAIN).nonzero().flatten()
    stored = FeatureSet.write(tmp_path / "fs", [feats], ["x", "y"])
    found = directions(stored, labels, model="m", data="d", items=train, iid=True)
    result = fit_probes(feats, labels, splits, grid)
    assert found.provenance["features"][0] == stored.key
    for site, name in enumerate(("x", "y")):
        coef = result.coef_[result.probes.filter(site=site)["probe"].item()]
        torch.testing.assert_close(found.vector(name), coef[1] - coef[0])


def test_directions_refuse_bad_items_and_missing_classes():
    feats, labels, _ = toy()
    with pytest.raises(ProbeInputError, match="items must be feature row indices"):
        directions(feats, labels, model="m", data="d", items=torch.tensor([0, 400]))
    with pytest.raises(ProbeInputError, match="0 items of class positive=5"):
        directions(feats, labels, model="m", data="d", positive=5)
    with pytest.raises(ProbeInputError, match="no site 'z'"):
        directions(feats, labels, model="m", data="d", site_names=["a", "b"]).vector("z")
