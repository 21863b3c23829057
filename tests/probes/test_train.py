"""The minibatch AdamW grid trainer: batching changes speed, never results."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl
import pytest
import torch
from sklearn.metrics import accuracy_score, f1_score

from probes import ProbeGrid, TrainConfig, fit_probes, random_splits
from probes._grid.inputs import type_ids
from probes.metric_table import metric_names
from probes.train import RING, STEP_CHUNK
from tests.probes.conftest import Synthetic, make_synthetic
from tests.probes.reference import train_reference_probe

CONFIG = TrainConfig(epochs=3, batch_size=16)


def one_probe_grid(row: dict, kind: str = "linear", hidden: int = 1024) -> ProbeGrid:
    """The grid holding only the probe described by a `ProbeResults.probes` row."""
    return ProbeGrid(
        seeds=[row["seed"]],
        task=row["variant"] == "task",
        control=row["variant"] == "control",
        sites=[row["site"]],
        train_fractions=(row["mask"],),
        kind=kind,
        hidden=hidden,
    )


def assert_probes_match_alone(
    data: Synthetic, grid: ProbeGrid, config: TrainConfig, hidden: int = 1024
) -> int:
    """Every probe of `grid` equals the same probe trained in a one-probe grid."""
    splits = random_splits(data.feats.shape[0], seed=1)
    batched = fit_probes(
        data.feats, data.labels, splits, grid, config, keys=data.keys, progress=False
    )
    for row in batched.probes.iter_rows(named=True):
        alone = fit_probes(
            data.feats,
            data.labels,
            splits,
            one_probe_grid(row, grid.kind, hidden),
            config,
            keys=data.keys,
            progress=False,
        )
        p = row["probe"]
        for name, tensor in alone.weights.items():
            torch.testing.assert_close(tensor[0], batched.weights[name][p], atol=1e-5, rtol=1e-5)
        assert alone.probes["best_epoch"][0] == row["best_epoch"]
        mine = batched.metrics.filter(probe=p).sort("split", "metric")
        np.testing.assert_allclose(
            alone.metrics.sort("split", "metric")["value"].to_numpy(),
            mine["value"].to_numpy(),
            atol=1e-5,
        )
    return batched.probes.height


def test_grid_of_24_probes_equals_each_probe_alone(synthetic: Synthetic) -> None:
    grid = ProbeGrid(seeds=[0, 7], control=True, train_fractions=(1.0, 0.5))
    assert assert_probes_match_alone(synthetic, grid, CONFIG) == 24


def test_shared_order_grid_equals_each_probe_alone(synthetic: Synthetic) -> None:
    grid = ProbeGrid(seeds=[1, 2], control=True, sites=[0, 2], train_fractions=(1.0, 0.25))
    config = TrainConfig(epochs=2, batch_size=32, shared_order=True)
    assert assert_probes_match_alone(synthetic, grid, config) == 16


def test_mlp_grid_equals_each_probe_alone() -> None:
    data = make_synthetic(n=120, dim=6)
    grid = ProbeGrid(seeds=[0, 1], control=True, sites=[1, 2], kind="mlp", hidden=12)
    assert assert_probes_match_alone(data, grid, TrainConfig(epochs=2, batch_size=16), 12) == 8


@pytest.mark.parametrize(
    ("control", "fraction", "batch_size", "whole_grid"),
    [(False, 1.0, 16, False), (True, 0.5, 16, False), (False, 1.0, 2, True), (True, 0.5, 1, True)],
    ids=["task", "control-half", "task-in-a-grid-of-chunks", "control-half-in-a-grid-of-chunks"],
)
def test_one_probe_equals_textbook_training(
    synthetic: Synthetic, control: bool, fraction: float, batch_size: int, whole_grid: bool
) -> None:
    """Autograd, torch.optim.AdamW + LambdaLR and sklearn's macro-F1 give the same probe; also
    one probe of a whole grid trained by two workers over several chunks of steps per epoch
    (dropout masks drawn ahead into a ring of slots while other chunks train)."""
    n = synthetic.feats.shape[0]
    splits = random_splits(n, seed=3)
    config = TrainConfig(epochs=4, batch_size=batch_size, threads=2 if whole_grid else None)
    grid = ProbeGrid(
        seeds=[5, 6] if whole_grid else [5],
        task=whole_grid or not control,
        control=whole_grid or control,
        sites=None if whole_grid else [2],
        train_fractions=(fraction,),
    )
    res = fit_probes(
        synthetic.feats,
        synthetic.labels,
        splits,
        grid,
        config,
        keys=synthetic.keys,
        progress=False,
        device="cpu",  # the reference draws its dropout masks from the CPU's stream
    )
    variant = "control" if control else "task"
    row = res.probes.filter(site=2, seed=5, variant=variant)
    p = int(row["probe"][0])
    ref = train_reference_probe(
        synthetic.feats[:, 2],
        synthetic.labels,
        splits.codes(),
        seed=5,
        control=control,
        fraction=fraction,
        config=config,
        type_ids=type_ids(synthetic.keys, n),
    )
    steps = -(-round(fraction * int((splits.codes() == 0).sum())) // batch_size)
    assert steps > RING * STEP_CHUNK or not whole_grid  # the draw slots are reused in an epoch
    torch.testing.assert_close(res.coef_[p], ref["coef"].T, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(res.intercept_[p], ref["intercept"], atol=1e-5, rtol=1e-5)
    assert row["best_epoch"][0] == ref["best_epoch"]
    test = splits.test
    pred = (synthetic.feats[test, 2] @ ref["coef"] + ref["intercept"]).argmax(-1).numpy()
    truth = ref["y"][test].numpy()
    scores = res.table().filter(split="test", site_index=2, seed=5, variant=variant)
    got = dict(zip(scores["metric"], scores["value"]))
    assert got["accuracy"] == pytest.approx(accuracy_score(truth, pred))
    assert got["macro_f1"] == pytest.approx(f1_score(truth, pred, average="macro"))


def test_probes_learn_where_the_signal_is(synthetic: Synthetic) -> None:
    splits = random_splits(synthetic.feats.shape[0])
    config = TrainConfig(epochs=10, batch_size=16, lr=1e-2)
    res = fit_probes(
        synthetic.feats, synthetic.labels, splits, ProbeGrid(seeds=[0]), config, progress=False
    )
    acc = res.table().filter(split="test", metric="accuracy").sort("site_index")["value"].to_list()
    assert acc[0] < 0.5 < 0.9 < acc[2]
    assert res.coef_.shape == (3, 4, 8) and res.intercept_.shape == (3, 4)  # sklearn layout


def test_multilabel_and_regression_heads_learn() -> None:
    gen = torch.Generator().manual_seed(0)
    n, dim = 300, 6
    feats = torch.randn(n, 2, dim, generator=gen)
    splits = random_splits(n)
    config = TrainConfig(epochs=15, batch_size=16, lr=3e-2, dropout=0.0)
    value = feats[:, 1, 0] - feats[:, 1, 1]
    reg = fit_probes(feats, value, splits, ProbeGrid(seeds=[0]), config, progress=False)
    r = reg.table().filter(split="test", metric="pearson").sort("site_index")["value"].to_list()
    assert abs(r[0]) < 0.3 and r[1] > 0.95
    multi = torch.stack([feats[:, 1, 0] > 0, feats[:, 1, 2] > 0.5, feats[:, 1, 3] < 0], 1)
    res = fit_probes(feats, multi.long(), splits, ProbeGrid(seeds=[0]), config, progress=False)
    f1 = res.table().filter(split="test", metric="micro_f1").sort("site_index")["value"].to_list()
    assert f1[1] > 0.85 > f1[0]
    assert set(res.table()["metric"].unique()) == set(metric_names("item_sums", "multilabel"))


def test_table_has_every_split_metric_and_best_epoch(synthetic: Synthetic) -> None:
    splits = random_splits(synthetic.feats.shape[0])
    res = fit_probes(
        synthetic.feats,
        synthetic.labels,
        splits,
        ProbeGrid(seeds=[0, 1], control=True),
        CONFIG,
        keys=synthetic.keys,
        progress=False,
    )
    table = res.table()
    assert table.columns == [
        "site",
        "site_index",
        "seed",
        "variant",
        "mask",
        "split",
        "metric",
        "value",
        "best_epoch",
        "mask_kind",
    ]
    assert table["site"].dtype == pl.String and table["site_index"].dtype == pl.Int64
    # the head's metrics on every split, the rank metrics (auroc, recall_at_fpr) on test
    per_probe = 3 * len(metric_names("item_sums", "classification")) + len(metric_names("ranks"))
    assert table.height == 12 * per_probe
    assert table["best_epoch"].is_between(1, CONFIG.epochs).all()
    summary = res.summary().filter(split="test", metric="accuracy", variant="task", site="2")
    values = table.filter(split="test", metric="accuracy", variant="task", site_index=2)["value"]
    assert summary["mean"][0] == pytest.approx(values.mean())
    assert summary["std"][0] == pytest.approx(values.std())
    assert isinstance(summary, pl.DataFrame)
    # the saved weights reproduce the reported metrics
    pred = res.predict(synthetic.feats[splits.test])
    test = table.filter(split="test", metric="accuracy", variant="task").sort("site", "seed")
    probes = res.probes.filter(variant="task").sort("site", "seed")["probe"].to_list()
    acc = (pred[probes] == synthetic.labels[splits.test]).double().mean(1)
    np.testing.assert_allclose(acc.numpy(), test["value"].to_numpy())


def test_half_precision_features_train_as_their_float32_values(synthetic: Synthetic) -> None:
    splits = random_splits(synthetic.feats.shape[0])
    half = synthetic.feats.half()
    grid = ProbeGrid(seeds=[0], control=True, sites=[1])
    a, b = (
        fit_probes(
            feats,
            synthetic.labels,
            splits,
            grid,
            CONFIG,
            keys=synthetic.keys,
            progress=False,
            device="cpu",
        )
        for feats in (half, half.float())
    )
    assert torch.equal(a.coef_, b.coef_)
    assert a.table().equals(b.table())


def test_results_do_not_depend_on_the_worker_threads(synthetic: Synthetic) -> None:
    splits = random_splits(synthetic.feats.shape[0])
    grid = ProbeGrid(seeds=[0, 1, 2], control=True, train_fractions=(1.0, 0.5))
    before = torch.get_num_threads()
    runs = [
        fit_probes(
            synthetic.feats,
            synthetic.labels,
            splits,
            grid,
            replace(CONFIG, threads=threads),
            keys=synthetic.keys,
            progress=False,
        )
        for threads in (1, 3)
    ]
    assert torch.get_num_threads() == before  # the caller's setting is restored
    for name, tensor in runs[0].weights.items():
        assert torch.equal(tensor, runs[1].weights[name])
    assert runs[0].table().equals(runs[1].table())


def test_bfloat16_compute_trains_close_to_float32(synthetic: Synthetic) -> None:
    splits = random_splits(synthetic.feats.shape[0])
    grid, config = ProbeGrid(seeds=[0, 1], kind="linear"), TrainConfig(epochs=10, lr=1e-2)
    runs = {
        compute: fit_probes(
            synthetic.feats,
            synthetic.labels,
            splits,
            grid,
            replace(config, compute=compute),
            progress=False,
        )
        for compute in ("float32", "bfloat16")
    }
    acc = {
        c: r.table().filter(split="test", metric="accuracy").sort("site", "seed")["value"]
        for c, r in runs.items()
    }
    assert (acc["float32"] - acc["bfloat16"]).abs().max() <= 0.05
    assert not torch.equal(runs["float32"].coef_, runs["bfloat16"].coef_)  # it ran in bfloat16
