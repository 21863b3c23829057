"""MDL online code (Voita & Titov 2020)."""

from __future__ import annotations

import math

import pytest
import torch

from probes import (
    MDLBlocks,
    ProbeConfigError,
    ProbeGrid,
    TrainConfig,
    control_labels,
    fit_probes,
    online_codelength,
    random_splits,
)
from probes._grid.inputs import type_ids
from probes._grid.streams import training_order
from probes.mdl import block_items
from tests.probes.conftest import make_synthetic

CONFIG = TrainConfig(epochs=3, batch_size=16)
BLOCKS = MDLBlocks((0.1, 0.25, 0.5, 1.0))


def test_batched_mdl_equals_plain_sequential_code() -> None:
    data = make_synthetic(n=240, sites=2)
    splits = random_splits(240, seed=2)
    grid = ProbeGrid(seeds=[0, 4], control=True, mdl=BLOCKS)
    res = fit_probes(data.feats, data.labels, splits, grid, CONFIG, keys=data.keys, progress=False)
    table = res.mdl()
    assert table.height == 2 * 2 * 2
    train = splits.train.nonzero().flatten()
    k, ids = data.num_classes, type_ids(data.keys, 240)
    for row in table.iter_rows(named=True):
        seed, site, control = row["seed"], row["site"], row["variant"] == "control"
        blocks = block_items(training_order(train, seed), BLOCKS)
        bits = [len(blocks[0]) * math.log2(k)]
        for fraction, nxt in zip(BLOCKS.probe_fractions, blocks[1:]):
            alone = fit_probes(
                data.feats,
                data.labels,
                splits,
                ProbeGrid(
                    seeds=[seed],
                    sites=[site],
                    task=not control,
                    control=control,
                    train_fractions=(fraction,),
                ),
                CONFIG,
                keys=data.keys,
                progress=False,
            )
            y = control_labels(data.labels, ids, seed) if control else data.labels
            logits = data.feats[nxt, site] @ alone.coef_[0].T + alone.intercept_[0]
            logp = torch.log_softmax(logits.double(), -1)[torch.arange(len(nxt)), y[nxt]]
            bits.append(float(-logp.sum() / math.log(2)))
        assert row["online_bits"] == pytest.approx(sum(bits), rel=1e-5)
        assert row["uniform_bits"] == pytest.approx(len(train) * math.log2(k))
        assert row["compression"] == pytest.approx(row["uniform_bits"] / row["online_bits"])
    # the block probes are ordinary masks of the grid: their metrics are reported too
    assert sorted(res.probes["mask"].unique().to_list()) == [0.1, 0.25, 0.5, 1.0]


def compression(labels: torch.Tensor, feats: torch.Tensor) -> float:
    res = fit_probes(
        feats,
        labels,
        random_splits(feats.shape[0]),
        ProbeGrid(seeds=[0], mdl=True),
        TrainConfig(epochs=10, batch_size=32, lr=5e-2),
        progress=False,
    )
    return float(res.mdl()["compression"][0])


def test_compression_is_one_on_random_labels_and_high_when_separable() -> None:
    gen = torch.Generator().manual_seed(0)
    n, dim, k = 1500, 8, 4
    labels = torch.randint(0, k, (n,), generator=gen)
    separable = torch.randn(n, dim, generator=gen) + 4 * torch.eye(k, dim)[labels]
    noise = torch.randn(n, dim, generator=gen)
    random_ratio = compression(labels, noise[:, None])
    assert 0.85 < random_ratio < 1.05
    assert compression(labels, separable[:, None]) > 2.0


def test_online_codelength_formula_and_config_errors() -> None:
    bits = torch.tensor([[10.0, 5.0], [1.0, 1.0]], dtype=torch.float64)
    assert online_codelength(bits, 4, 8).tolist() == [12 + 15, 12 + 2]
    with pytest.raises(ProbeConfigError, match="strictly increasing"):
        MDLBlocks((0.5, 0.2, 1.0))
    data = make_synthetic(n=60)
    with pytest.raises(ProbeConfigError, match="classification"):
        fit_probes(data.feats, data.feats[:, 0, 0], random_splits(60), ProbeGrid(mdl=True))
