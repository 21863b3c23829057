"""The batched structural-probe trainer against a hand-computed loss, the reference regimen
trained the textbook way (one probe, autograd, torch.optim.Adam, ReduceLROnPlateau), a probe
trained alone, and trees it must recover."""

from __future__ import annotations

import math

import pytest
import torch

from probes import ProbeConfigError, ProbeInputError
from probes.structural import SentenceTrees, StructuralConfig, StructuralGrid, fit_structural_probes
from probes.structural._probe import (
    initial_projection,
    order_generator,
    predict,
    project,
    sentence_losses,
)
from tests.probes.structural_data import bfs_distances, embedded_trees, sentence_heads


def test_losses_equal_the_hand_computation() -> None:
    # B = I; h = (0,0), (2,0), (2,1): squared distances 4, 5, 1 and squared norms 0, 4, 5.
    # Gold chain 1 <- 2 <- 3 (heads 0, 1, 2): distances 1, 2, 1 and depths 0, 1, 2.
    h = torch.tensor([[0.0, 0.0], [2.0, 0.0], [2.0, 1.0]])
    proj = torch.eye(2).view(1, 1, 1, 2, 2)
    y = project(h.view(1, 1, 3, 2), proj)
    slots = torch.arange(3).view(1, 3)
    mask = torch.ones(1, 1, 3, dtype=torch.bool)
    lengths = torch.tensor([[3]])
    dist = predict(y, slots, 1, 3, "distance")
    assert dist[0, 0, 0, 0].tolist() == [[0, 4, 5], [4, 0, 1], [5, 1, 0]]
    gold = torch.tensor([[[0.0, 1, 2], [1, 0, 1], [2, 1, 0]]]).view(1, 1, 3, 3)
    loss = sentence_losses(dist, gold, mask, lengths, "distance")
    assert float(loss.squeeze()) == pytest.approx((3 + 3 + 0) * 2 / 9)  # |4-1|, |5-2|, |1-1|
    depth = predict(y, slots, 1, 3, "depth")
    loss = sentence_losses(depth, torch.tensor([[[0.0, 1, 2]]]), mask, lengths, "depth")
    assert float(loss.squeeze()) == pytest.approx((0 + 3 + 3) / 3)


def reference_probe(data, kind, seed, site, rank, config):
    """One probe trained as regimen.py does, sentence by sentence, with torch.optim."""
    trees, feats, codes = data.trees, data.feats, data.splits
    dim = feats.shape[2]
    proj = initial_projection(seed, site, rank, dim, rank, config.init_range).requires_grad_()
    opt = torch.optim.Adam([proj], lr=config.lr)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.1, patience=0)
    gen = order_generator(seed)
    train = (codes == 0).nonzero().flatten()
    dev = (codes == 1).nonzero().flatten()

    def loss_of(s: int) -> torch.Tensor:
        heads = sentence_heads(trees, s)
        first, n = int(trees.offsets[s]), len(heads)
        t = feats[first : first + n, site] @ proj
        gold = torch.from_numpy(bfs_distances(heads)).float()
        if kind == "distance":
            pred = (t[:, None, :] - t[None, :, :]).pow(2).sum(-1)
            return (pred - gold).abs().sum() / n**2
        pred = (t * t).sum(-1)
        return (pred - gold[heads.index(0)]).abs().sum() / n

    best, best_loss, best_epoch, lrs = proj.detach().clone(), math.inf, -1, []
    for epoch in range(config.epochs):
        order = train[torch.randperm(len(train), generator=gen)]
        for batch in order.split(config.batch_size):
            opt.zero_grad()
            loss = torch.stack([loss_of(int(s)) for s in batch]).sum() / len(batch)
            loss.backward()
            opt.step()
        with torch.no_grad():
            dev_loss = float(torch.stack([loss_of(int(s)) for s in dev]).mean())
        plateau.step(dev_loss)
        lrs.append(opt.param_groups[0]["lr"])
        if dev_loss < best_loss - 0.0001:
            best, best_loss, best_epoch = proj.detach().clone(), dev_loss, epoch
        elif best_epoch < epoch - 4:
            break
    return best, best_epoch + 1, best_loss, epoch + 1, lrs


@pytest.mark.parametrize("kind", ["distance", "depth"])
def test_one_probe_equals_the_reference_regimen(kind: str) -> None:
    data = embedded_trees(60, seed=1, noise=0.3)
    config = StructuralConfig(epochs=14, batch_size=4, lr=0.03)
    grid = StructuralGrid(seeds=(3,), ranks=(5,), sites=(1,))
    got = fit_structural_probes(data.feats, data.trees, data.splits, kind, grid, config)
    want, best_epoch, best_loss, epochs, lrs = reference_probe(data, kind, 3, 1, 5, config)
    assert lrs[-1] < config.lr  # the plateau rule fired
    row = got.probes.row(0, named=True)
    assert (row["best_epoch"], row["epochs"]) == (best_epoch, epochs)
    assert row["dev_loss"] == pytest.approx(best_loss, rel=1e-4)
    torch.testing.assert_close(got.weights[0], want, atol=2e-4, rtol=1e-3)


def test_a_probe_in_the_grid_equals_it_trained_alone() -> None:
    data = embedded_trees(40, seed=2, noise=0.3)
    config = StructuralConfig(epochs=4, batch_size=6)
    grid = StructuralGrid(seeds=(0, 5), ranks=(None, 3), sites=(0, 1))
    together = fit_structural_probes(data.feats, data.trees, data.splits, "distance", grid, config)
    table = together.table()
    for probe in together.probes.iter_rows(named=True):
        alone_grid = StructuralGrid(
            seeds=(probe["seed"],), ranks=(probe["rank"],), sites=(probe["site"],)
        )
        alone = fit_structural_probes(
            data.feats, data.trees, data.splits, "distance", alone_grid, config, progress=False
        )
        rank = probe["rank"]
        torch.testing.assert_close(
            together.weights[probe["probe"], :, :rank], alone.weights[0], atol=1e-5, rtol=1e-4
        )
        assert bool((together.weights[probe["probe"], :, rank:] == 0).all())
        mine = table.filter(seed=probe["seed"], site=probe["site"], rank=rank).sort(
            "split", "metric"
        )
        theirs = alone.table().sort("split", "metric")
        assert mine["value"].to_list() == pytest.approx(theirs["value"].to_list(), abs=1e-6)


def test_the_probe_recovers_embedded_trees_and_noise_does_not() -> None:
    data = embedded_trees(120, seed=0, noise=0.05)
    config = StructuralConfig(epochs=12, lr=0.01)
    grid = StructuralGrid(seeds=(0,), sites=(0, 1))
    for kind, metric, floor in (("distance", "uuas", 0.9), ("depth", "root_acc", 0.9)):
        res = fit_structural_probes(data.feats, data.trees, data.splits, kind, grid, config)
        test = res.table().filter(split="test", metric=metric).sort("site")["value"].to_list()
        assert test[1] >= floor, (kind, test)
        assert test[0] < test[1] - 0.3, (kind, test)


def test_bad_inputs_are_refused() -> None:
    data = embedded_trees(20, seed=0)
    with pytest.raises(ProbeInputError, match="one feature row per word"):
        fit_structural_probes(data.feats[1:], data.trees, data.splits)
    with pytest.raises(ProbeInputError, match="no sentence is in dev"):
        fit_structural_probes(data.feats, data.trees, torch.zeros(20, dtype=torch.long))
    with pytest.raises(ProbeConfigError, match="at most the features' width"):
        fit_structural_probes(
            data.feats, data.trees, data.splits, grid=StructuralGrid(ranks=(999,))
        )
    with pytest.raises(ProbeConfigError, match="lr"):
        StructuralConfig(lr=0.0)
    assert isinstance(data.trees, SentenceTrees)


@pytest.mark.parametrize("kind", ["distance", "depth"])
def test_written_out_gradient_equals_autograd(kind: str) -> None:
    from probes.structural._probe import loss_gradient

    data = embedded_trees(12, seed=4, noise=0.5)
    trees, feats = data.trees, data.feats
    gen = torch.Generator().manual_seed(0)
    proj = torch.randn(2, 2, 3, feats.shape[2], 4, generator=gen, dtype=torch.float64)
    proj[:, :, 0, :, 3] = 0  # a rank-3 probe next to rank-4 ones
    batch = trees.padded(torch.tensor([0, 3, 5, 1, 2, 7]))  # seed 0: 0, 3, 5; seed 1: 1, 2, 7
    b, w = 3, batch.mask.shape[1]
    mask = batch.mask.view(2, b, w)
    flat = mask.view(2, -1)
    n = int(flat.sum(-1).max())
    order = (~flat).int().argsort(dim=-1, stable=True)[:, :n]
    filled = torch.arange(n)[None] < flat.sum(-1, keepdim=True)
    slots = torch.where(filled, order, b * w)
    words = torch.where(filled, batch.index.view(2, -1).gather(1, order), 0)
    x = feats.double()[words.flatten()].view(2, n, 2, -1).transpose(1, 2)
    gold = (batch.distances() if kind == "distance" else batch.depths()).double()
    gold = gold.view(2, b, *gold.shape[1:])
    lengths = batch.lengths.view(2, b)
    leaf = proj.clone().requires_grad_()
    pred = predict(project(x, leaf), slots, b, w, kind)
    sentence_losses(pred, gold, mask, lengths, kind).mean(-1).sum().backward()
    got = loss_gradient(x, proj, slots, gold, mask, lengths, kind)
    torch.testing.assert_close(got, leaf.grad)
