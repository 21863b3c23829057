"""ProbeResults: frames, saving and loading; splits."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from polars.testing import assert_frame_equal

from probes import (
    MDLBlocks,
    ProbeConfigError,
    ProbeGrid,
    ProbeInputError,
    ProbeResults,
    Splits,
    TrainConfig,
    fit_probes,
    random_splits,
)
from tests.probes.conftest import Synthetic

FAST = TrainConfig(epochs=2, batch_size=32)


def test_save_and_load_round_trip(synthetic: Synthetic, tmp_path: Path) -> None:
    grid = ProbeGrid(seeds=[0, 1], control=True, mdl=MDLBlocks((0.25, 0.5, 1.0)))
    res = fit_probes(
        synthetic.feats,
        synthetic.labels,
        random_splits(240),
        grid,
        FAST,
        keys=synthetic.keys,
        progress=False,
    )
    res.save(tmp_path / "run")
    res.save(tmp_path / "run")  # overwriting is fine
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == [
        "codelengths.parquet",
        "manifest.json",
        "metrics.parquet",
        "probes.parquet",
        "test_predictions.safetensors",
        "weights.safetensors",
    ]
    back = ProbeResults.load(tmp_path / "run")
    assert_frame_equal(back.table(), res.table())
    assert_frame_equal(back.mdl(), res.mdl())
    assert back.weights.keys() == res.weights.keys()
    for name, tensor in res.weights.items():
        assert torch.equal(back.weights[name], tensor)
    assert (back.kind, back.head) == ("linear", "classification")
    assert res.coef_.shape == (grid.layout(3).n_probes, 4, 8)  # sklearn layout


def test_mlp_weights_and_missing_parts(synthetic: Synthetic, tmp_path: Path) -> None:
    res = fit_probes(
        synthetic.feats,
        synthetic.labels,
        random_splits(240),
        ProbeGrid(seeds=[0], sites=[2], kind="mlp", hidden=5),
        FAST,
        progress=False,
    )
    assert {n: tuple(t.shape) for n, t in res.weights.items()} == {
        "hidden_weight": (1, 8, 5),
        "hidden_bias": (1, 5),
        "coef": (1, 5, 4),
        "intercept": (1, 4),
    }
    res.save(tmp_path)
    back = ProbeResults.load(tmp_path)
    assert back.kind == "mlp"
    assert torch.equal(back.predict(synthetic.feats), res.predict(synthetic.feats))
    acc = (res.predict(synthetic.feats)[0] == synthetic.labels).double()
    assert 0 <= float(acc.mean()) <= 1
    with pytest.raises(ProbeConfigError, match="control=True"):
        res.selectivity()
    with pytest.raises(ProbeConfigError, match="mdl=True"):
        res.mdl()


def test_unused_items_are_left_out(synthetic: Synthetic) -> None:
    codes = random_splits(240, seed=4).codes()
    codes[:40] = -1
    res = fit_probes(
        synthetic.feats,
        synthetic.labels,
        codes,
        ProbeGrid(seeds=[0], sites=[2]),
        FAST,
        progress=False,
    )
    full = fit_probes(
        synthetic.feats[40:],
        synthetic.labels[40:],
        codes[40:],
        ProbeGrid(seeds=[0], sites=[2]),
        FAST,
        progress=False,
    )
    assert_frame_equal(res.table(), full.table())


def test_random_splits_counts_and_codes() -> None:
    splits = random_splits(1000, seed=3)
    assert (int(splits.train.sum()), int(splits.dev.sum()), int(splits.test.sum())) == (
        700,
        100,
        200,
    )
    again = Splits.from_codes(splits.codes())
    assert torch.equal(again.codes(), splits.codes())
    assert torch.equal(random_splits(1000, seed=3).codes(), splits.codes())
    assert not torch.equal(random_splits(1000, seed=4).codes(), splits.codes())


def test_logits_of_some_rows_equal_those_rows_of_all(synthetic: Synthetic) -> None:
    res = fit_probes(
        synthetic.feats,
        synthetic.labels,
        random_splits(240),
        ProbeGrid(seeds=[0, 1], control=True),
        FAST,
        keys=synthetic.keys,
        progress=False,
    )
    rows = torch.tensor([5, 0, 17, 200])
    torch.testing.assert_close(
        res.logits(synthetic.feats, rows), res.logits(synthetic.feats)[:, rows]
    )
    assert torch.equal(
        res.predict(synthetic.feats.half(), rows), res.predict(synthetic.feats.half())[:, rows]
    )


def test_table_names_sites_and_masks(tmp_path):
    gen = torch.Generator().manual_seed(0)
    feats = torch.randn(60, 2, 4, generator=gen)
    targets = (feats[:, 0, 0] > 0).long()
    splits = torch.tensor([0] * 40 + [1] * 10 + [2] * 10)
    grid = ProbeGrid(seeds=(0,), train_fractions=(0.5, 1.0))
    config = TrainConfig(epochs=1)
    named = fit_probes(
        feats, targets, splits, grid, config, progress=False, site_names=["embed", "layer.1"]
    )
    table = named.table()
    assert dict(table.select("site_index", "site").unique().iter_rows()) == {
        0: "embed",
        1: "layer.1",
    }
    assert set(table["mask_kind"]) == {"train_fraction"} and set(table["mask"]) == {0.5, 1.0}
    named.save(tmp_path / "r")
    again = ProbeResults.load(tmp_path / "r")
    assert again.table().equals(table)
    plain = fit_probes(feats, targets, splits, ProbeGrid(seeds=(0,)), config, progress=False)
    unnamed = plain.table().select("site_index", "site").unique().sort("site_index")
    assert unnamed.rows() == [(0, "0"), (1, "1")]  # no names given: the index, written out
    masks = torch.zeros(2, 60, dtype=torch.bool)
    masks[0, :20], masks[1, :40] = True, True
    explicit = ProbeGrid(seeds=(0,), train_masks=masks)
    by_mask = fit_probes(feats, targets, splits, explicit, config, progress=False)
    assert set(by_mask.table()["mask_kind"]) == {"mask_id"}
    with pytest.raises(ProbeInputError, match="site_names: 1 names for 2 sites"):
        fit_probes(feats, targets, splits, grid, config, progress=False, site_names=["x"])


@pytest.mark.parametrize("kind", ["linear", "mlp"])
def test_stored_probes_run_their_kinds_forward_pass(synthetic: Synthetic, kind: str) -> None:
    """`logits` equals the hand-written forward pass of the stored weights, and its
    predictions are the ones the evaluation stored for the test items."""
    splits = random_splits(240)
    grid = ProbeGrid(seeds=[0, 1], control=True, kind=kind, hidden=8)  # type: ignore[arg-type]
    res = fit_probes(synthetic.feats, synthetic.labels, splits, grid, FAST, progress=False)
    assert res.kind == kind
    rows = torch.tensor([3, 0, 17, 5])
    got = res.logits(synthetic.feats, rows)
    w = res.weights
    for row in res.probes.iter_rows(named=True):
        p, x = row["probe"], synthetic.feats[rows, row["site"]]
        if kind == "mlp":
            x = torch.relu(x @ w["hidden_weight"][p] + w["hidden_bias"][p])
        want = x @ w["coef"][p] + w["intercept"][p]
        torch.testing.assert_close(got[p], want, atol=1e-5, rtol=1e-5)
    test = res.test
    assert test is not None
    assert torch.equal(res.predict(synthetic.feats, test.items), test.pred.long())
