"""Bad input gives specific errors that name the field and the fix."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from probes import (
    ClassAbsentFromTrainWarning,
    ProbeConfigError,
    ProbeGrid,
    ProbeInputError,
    Splits,
    TrainConfig,
    fit_probes,
    random_splits,
)
from probes._grid.inputs import check_features
from probes.metric_table import metric_names
from tests.probes.conftest import Synthetic

FAST = TrainConfig(epochs=1, batch_size=32)
ONE = ProbeGrid(seeds=[0], sites=[0])


def fit(data: Synthetic, **changes: object) -> object:
    args = {
        "feats": data.feats,
        "targets": data.labels,
        "splits": random_splits(data.feats.shape[0]),
        "grid": ONE,
        "config": FAST,
        "progress": False,
    }
    args.update(changes)
    return fit_probes(**args)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_features(synthetic: Synthetic, bad: float) -> None:
    feats = synthetic.feats.clone()
    feats[17, 1, 3] = bad
    with pytest.raises(ProbeInputError, match=r"NaN or inf \(first at index \(17, 1, 3\)\)"):
        fit(synthetic, feats=feats)


def test_non_finite_features_checked_block_by_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of a few rows: the first bad value and the count are those of the whole tensor,
    and float16 rows whose sum overflows but whose values are finite pass."""
    monkeypatch.setattr("probes._grid.inputs.CHECK_BYTES", 3 * 4 * 8 * 2)  # 3 rows per block
    feats = torch.full((20, 4, 8), 60000.0, dtype=torch.float16)  # every row sums past 65504
    check_features(feats)
    feats[10, 2, 5], feats[13, 0, 1], feats[19, 3, 7] = float("nan"), float("inf"), float("nan")
    first = r"3 values are NaN or inf \(first at index \(10, 2, 5\)\)"
    with pytest.raises(ProbeInputError, match=first):
        check_features(feats)


def test_features_of_the_wrong_shape_or_type(synthetic: Synthetic) -> None:
    with pytest.raises(ProbeInputError, match="3 axes"):
        check_features(synthetic.feats[:, 0])
    with pytest.raises(ProbeInputError, match="floating"):
        check_features(synthetic.feats.long())
    # with the test suite's jaxtyping hook the annotation catches them first (a TypeError)
    for feats in (synthetic.feats[:, 0], synthetic.feats.long()):
        with pytest.raises((ProbeInputError, TypeError)):
            fit(synthetic, feats=feats)


def test_label_outside_the_class_range(synthetic: Synthetic) -> None:
    with pytest.raises(ProbeInputError, match=r"label 3 is outside the class range 0\.\.2"):
        fit(synthetic, num_classes=3)
    labels = synthetic.labels.clone()
    labels[5] = -1
    with pytest.raises(ProbeInputError, match="label -1"):
        fit(synthetic, targets=labels)


def test_sparse_class_ids_are_refused_with_the_fix(synthetic: Synthetic) -> None:
    labels = synthetic.labels.clone()
    labels[5] = 49_999
    with pytest.raises(
        ProbeInputError, match=r"class ids are sparse: 5 distinct ids up to 49999 would make a"
    ):
        fit(synthetic, targets=labels)
    names, ids = np.unique(labels.numpy(), return_inverse=True)  # the fix the message gives
    dense = fit(synthetic, targets=torch.as_tensor(ids))
    assert names.tolist()[-1] == 49_999 and dense.table().height > 0


def test_split_without_training_or_dev_items(synthetic: Synthetic) -> None:
    n = synthetic.feats.shape[0]
    with pytest.raises(ProbeInputError, match="no item is in train"):
        fit(synthetic, splits=torch.full((n,), 2))
    with pytest.raises(ProbeInputError, match="no item is in dev"):
        fit(synthetic, splits=torch.tensor([0, 2] * (n // 2)))
    with pytest.raises(ProbeInputError, match="code 3 is not a split"):
        fit(synthetic, splits=torch.full((n,), 3))


def test_class_in_test_but_not_in_train_warns_and_still_trains(synthetic: Synthetic) -> None:
    splits = random_splits(synthetic.feats.shape[0])
    labels = synthetic.labels.clone()
    labels[splits.test.nonzero()[:3, 0]] = 4  # class 4 only in test
    with pytest.warns(ClassAbsentFromTrainWarning, match=r"classes \[4\] occur in test"):
        res = fit(synthetic, targets=labels, splits=splits)
    per_test = len(metric_names("item_sums", "classification")) + len(metric_names("ranks"))
    assert res.table().filter(split="test").height == per_test


def test_mismatched_lengths_name_the_field(synthetic: Synthetic) -> None:
    n = synthetic.feats.shape[0]
    with pytest.raises(ProbeInputError, match=rf"targets: shape \({n - 1},\) for {n} items"):
        fit(synthetic, targets=synthetic.labels[:-1])
    with pytest.raises(ProbeInputError, match=rf"splits: {n + 1} split codes for {n} items"):
        fit(synthetic, splits=torch.zeros(n + 1, dtype=torch.int64))
    with pytest.raises(ProbeInputError, match=rf"keys: shape \(3,\) for {n} items"):
        fit(synthetic, keys=["a", "b", "c"], grid=ProbeGrid(seeds=[0], control=True))


def test_bad_splits_and_targets_shapes() -> None:
    with pytest.raises(ProbeInputError, match="more than one"):
        Splits(torch.tensor([True, True]), torch.tensor([True, False]), torch.tensor([False] * 2))
    with pytest.raises(ProbeInputError, match="1-D integer"):
        fit_probes(torch.ones(4, 1, 2), torch.tensor([0, 1, 0, 1]), torch.zeros(4, 2))
    with pytest.raises(ProbeInputError, match="only 0 and 1"):
        fit_probes(torch.ones(4, 1, 2), torch.full((4, 3), 2), torch.tensor([0, 0, 1, 2]))
    with pytest.raises(ProbeInputError, match="fractions"):
        random_splits(10, fractions=(0.5, 0.5, 0.5))


def test_bad_grid_and_config(synthetic: Synthetic) -> None:
    with pytest.raises(ProbeConfigError, match="site 5 is outside the features' 3 sites"):
        fit(synthetic, grid=ProbeGrid(sites=[5]))
    for bad in ({"seeds": [1, 1]}, {"task": False}, {"train_fractions": (0.0,)}):
        with pytest.raises(ProbeConfigError):
            ProbeGrid(**bad)
    with pytest.raises((ProbeConfigError, TypeError)):  # TypeError: the tests' type hook
        ProbeGrid(kind="tree")  # type: ignore[arg-type]
    with pytest.raises(ProbeConfigError, match=r"TrainConfig.dropout=1\.5"):
        TrainConfig(dropout=1.5)
    with pytest.raises(ProbeConfigError, match="not a regression metric"):
        fit(synthetic, targets=synthetic.feats[:, 0, 0], config=TrainConfig(select_by="mcc"))
