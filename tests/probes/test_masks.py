"""Explicit train (and dev) masks: one grid equals one `fit_probes` call per mask."""

from __future__ import annotations

import pytest
import torch

from probes import (
    ClassAbsentFromTrainWarning,
    ProbeConfigError,
    ProbeGrid,
    ProbeInputError,
    TrainConfig,
    fit_probes,
)
from probes.splits import DEV, TEST, TRAIN, UNUSED
from tests.probes.conftest import Synthetic

CONFIG = TrainConfig(epochs=4, batch_size=16, lr=1e-2)


def base_codes(n: int) -> torch.Tensor:
    """Items 0..159 train, 160..199 dev, 200.. test."""
    codes = torch.full((n,), TEST)
    codes[:160], codes[160:200] = TRAIN, DEV
    return codes


def subsets(seeds: int, sizes: tuple[int, ...]) -> torch.Tensor:
    """`[mask, seed, item]`: seed s's first `size` training items in a seeded order."""
    masks = torch.zeros(len(sizes), seeds, 240, dtype=torch.bool)
    for s in range(seeds):
        order = torch.randperm(160, generator=torch.Generator().manual_seed(100 + s))
        for m, size in enumerate(sizes):
            masks[m, s, order[:size]] = True
    return masks


def assert_probe_equal(grid_res, row: dict, alone, alone_row: dict) -> None:
    p, q = int(row["probe"]), int(alone_row["probe"])
    for name, tensor in alone.weights.items():
        torch.testing.assert_close(tensor[q], grid_res.weights[name][p], atol=1e-5, rtol=1e-5)
    assert row["best_epoch"] == alone_row["best_epoch"]
    ours = grid_res.metrics.filter(probe=p).sort("split", "metric")
    theirs = alone.metrics.filter(probe=q).sort("split", "metric")
    assert ours["value"].to_list() == pytest.approx(theirs["value"].to_list(), abs=1e-9)


def test_per_seed_train_masks_equal_one_call_per_mask(synthetic: Synthetic) -> None:
    n = synthetic.feats.shape[0]
    codes, sizes, seeds = base_codes(n), (40, 120, 80), (0, 1)
    masks = subsets(len(seeds), sizes)
    grid = ProbeGrid(seeds=seeds, control=True, train_masks=masks)
    res = fit_probes(
        synthetic.feats, synthetic.labels, codes, grid, CONFIG, keys=synthetic.keys, progress=False
    )
    # largest mask first; the mask column is the position in train_masks
    assert res.probes["mask"].unique(maintain_order=True).to_list() == [1.0, 2.0, 0.0]
    assert res.probes.height == 3 * 2 * 3 * 2
    for m in range(len(sizes)):
        for s, seed in enumerate(seeds):
            alone_codes = torch.where(codes == TRAIN, UNUSED, codes)
            alone_codes[masks[m, s]] = TRAIN
            alone = fit_probes(
                synthetic.feats,
                synthetic.labels,
                alone_codes,
                ProbeGrid(seeds=[seed], control=True),
                CONFIG,
                keys=synthetic.keys,
                progress=False,
            )
            for alone_row in alone.probes.iter_rows(named=True):
                row = res.probes.filter(
                    mask=float(m),
                    seed=seed,
                    site=alone_row["site"],
                    variant=alone_row["variant"],
                ).row(0, named=True)
                assert_probe_equal(res, row, alone, alone_row)


def test_dev_masks_let_each_mask_pick_its_epoch_on_its_own_dev(synthetic: Synthetic) -> None:
    n = synthetic.feats.shape[0]
    codes = torch.where(torch.arange(n) < 200, TRAIN, TEST)  # no dev items in the splits
    folds = torch.arange(n) % 4
    in_train = codes == TRAIN
    train = torch.stack([in_train & (folds != f) & (folds != (f + 1) % 4) for f in range(4)])
    dev = torch.stack([in_train & (folds == (f + 1) % 4) for f in range(4)])
    grid = ProbeGrid(seeds=[3], sites=[1, 2], train_masks=train, dev_masks=dev)
    config = TrainConfig(epochs=4, batch_size=16, lr=1e-2, select_by="loss")
    res = fit_probes(synthetic.feats, synthetic.labels, codes, grid, config, progress=False)
    for f in range(4):
        alone_codes = torch.where(train[f], TRAIN, torch.where(dev[f], DEV, codes))
        alone_codes[in_train & ~train[f] & ~dev[f]] = UNUSED
        alone = fit_probes(
            synthetic.feats,
            synthetic.labels,
            alone_codes,
            ProbeGrid(seeds=[3], sites=[1, 2]),
            config,
            progress=False,
        )
        for alone_row in alone.probes.iter_rows(named=True):
            row = res.probes.filter(mask=float(f), site=alone_row["site"]).row(0, named=True)
            assert_probe_equal(res, row, alone, alone_row)


def test_shared_masks_with_shared_order(synthetic: Synthetic) -> None:
    codes = base_codes(240)
    masks = subsets(1, (60, 100))[:, 0]  # [mask, item]: every seed trains on the same items
    shared = TrainConfig(epochs=2, batch_size=16, shared_order=True)
    res = fit_probes(
        synthetic.feats,
        synthetic.labels,
        codes,
        ProbeGrid(seeds=[0, 1], train_masks=masks),
        shared,
        progress=False,
    )
    assert res.probes.height == 2 * 2 * 3
    with pytest.raises(ProbeConfigError, match=r"\[mask, item\]"):
        fit_probes(
            synthetic.feats,
            synthetic.labels,
            codes,
            ProbeGrid(seeds=[0, 1], train_masks=subsets(2, (60,))),
            shared,
            progress=False,
        )


def test_bad_masks_fail_with_the_field_and_the_fix(synthetic: Synthetic) -> None:
    codes, masks = base_codes(240), subsets(1, (50,))
    with pytest.raises(ProbeConfigError, match="booleans"):
        ProbeGrid(seeds=[0], train_masks=masks.int())
    with pytest.raises(ProbeConfigError, match="seed rows"):
        ProbeGrid(seeds=[0, 1], train_masks=masks)
    with pytest.raises(ProbeConfigError, match="not both"):
        ProbeGrid(seeds=[0], train_masks=masks, train_fractions=(0.5,))
    with pytest.raises(ProbeConfigError, match="not both"):
        ProbeGrid(seeds=[0], train_masks=masks, mdl=True)
    with pytest.raises(ProbeConfigError, match="empty"):
        ProbeGrid(seeds=[0], train_masks=torch.zeros(1, 240, dtype=torch.bool))
    with pytest.raises(ProbeConfigError, match="equally many"):
        ProbeGrid(seeds=[0, 1], train_masks=torch.cat([subsets(1, (5,)), subsets(1, (6,))], 1))
    with pytest.raises(ProbeConfigError, match="needs train_masks"):
        ProbeGrid(seeds=[0], dev_masks=masks)
    with pytest.raises(ProbeConfigError, match="differs"):
        ProbeGrid(seeds=[0], train_masks=masks, dev_masks=masks[:, 0])

    def fit(grid: ProbeGrid) -> None:
        fit_probes(synthetic.feats, synthetic.labels, codes, grid, CONFIG, progress=False)

    outside = masks.clone()
    outside[0, 0, 210] = True  # a test item
    with pytest.raises(ProbeInputError, match="not train items of the splits"):
        fit(ProbeGrid(seeds=[0], train_masks=outside))
    with pytest.raises(ProbeInputError, match="one column per item"):
        fit(ProbeGrid(seeds=[0], train_masks=masks[..., :100]))
    with pytest.raises(ProbeInputError, match="both its train and dev"):
        fit(ProbeGrid(seeds=[0], train_masks=masks, dev_masks=masks))
    with pytest.raises(ProbeInputError, match="no dev item"):
        fit(ProbeGrid(seeds=[0], train_masks=masks, dev_masks=torch.zeros_like(masks)))


def test_a_class_missing_from_one_mask_warns(synthetic: Synthetic) -> None:
    codes = base_codes(240)
    labels = synthetic.labels
    without = (codes == TRAIN) & (labels != 3)
    masks = torch.stack([codes == TRAIN, without])
    with pytest.warns(ClassAbsentFromTrainWarning, match=r"classes \[3\].*some of the train"):
        fit_probes(
            synthetic.feats,
            labels,
            codes,
            ProbeGrid(seeds=[0], sites=[2], train_masks=masks),
            TrainConfig(epochs=1),
            progress=False,
        )
