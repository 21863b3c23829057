"""The trainers on a `FeatureSet` under a memory budget: the same numbers as the fit of the same
features as a tensor, bit for bit, whether the sites are read at once, in groups (the next read
while one trains) or streamed by item blocks; and every byte read once where sites fit."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from torch import Tensor

from lingprobe.feature_set import FeatureSet
from probes import (
    ProbeConfigError,
    ProbeGrid,
    ProbeResults,
    TrainConfig,
    fit_logistic_regression,
    fit_probes,
    random_splits,
)
from probes._grid import site_groups, site_reader
from probes._grid.memory_budget import plan_sites
from probes.erasure import erase_then_probe, fit_inlp, fit_leace
from probes.structural import StructuralConfig, StructuralGrid, fit_structural_probes
from tests.probes.conftest import Synthetic, make_synthetic
from tests.probes.group_reads import record_group_reads
from tests.probes.structural_data import embedded_trees
from tests.probes.test_erasure import concept_data

N, SITES, DIM = 240, 5, 8
SITE_BYTES = N * DIM * 4  # one site's float32 features
NAMES = [f"layer.{i}" for i in range(SITES)]


class CountingFeatureSet(FeatureSet):
    """A FeatureSet that records every read: (sites, items read, thread name)."""

    reads: list[tuple[tuple[int, ...], int, str]]

    def read(self, sites: Sequence[int] | None = None, items=None, *, out=None) -> Tensor:  # type: ignore[override]
        out = super().read(sites, items, out=out)
        chosen = tuple(range(self.shape[1])) if sites is None else tuple(sites)
        self.reads.append((chosen, out.shape[0], threading.current_thread().name))
        return out


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """(sites read, groups the fit still held) as each group's read began."""
    return record_group_reads(monkeypatch, site_groups)


def counting(folder: Path) -> CountingFeatureSet:
    features = CountingFeatureSet.open(folder)
    assert isinstance(features, CountingFeatureSet)
    features.reads = []
    return features


@pytest.fixture(scope="module")
def data() -> Synthetic:
    return make_synthetic(n=N, sites=SITES, dim=DIM)


@pytest.fixture(scope="module")
def folder(data: Synthetic, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("features") / "fs"
    FeatureSet.write(path, [data.feats[:100], data.feats[100:]], NAMES, shard_size=64)
    return path


def assert_same_results(a: ProbeResults, b: ProbeResults) -> None:
    """Every number and frame of two fits equal, bit for bit."""
    assert a.table().equals(b.table())
    assert a.probes.equals(b.probes)
    assert a.weights.keys() == b.weights.keys()
    for name, tensor in a.weights.items():
        assert torch.equal(tensor, b.weights[name]), name
    if a.codelengths is None:
        assert b.codelengths is None
    else:
        assert b.codelengths is not None and a.codelengths.equals(b.codelengths)
    assert a.test is not None and b.test is not None
    assert torch.equal(a.test.pred, b.test.pred)
    assert torch.equal(a.test.target_row, b.test.target_row)
    assert torch.equal(a.test.targets, b.test.targets)
    if a.test.scores is None:
        assert b.test.scores is None
    else:  # the class scores of the rank metrics and their intervals
        assert b.test.scores is not None and torch.equal(a.test.scores, b.test.scores)


GRIDS = {
    "per-seed-order": (
        ProbeGrid(seeds=[0, 7], control=True, train_fractions=(1.0, 0.5)),
        TrainConfig(epochs=3, batch_size=16),
    ),
    "shared-order-mdl-some-sites": (
        ProbeGrid(seeds=[1, 2], control=True, sites=[4, 0, 2], mdl=True),
        TrainConfig(epochs=2, batch_size=16, shared_order=True),
    ),
    "mlp-two-threads": (
        ProbeGrid(seeds=[0, 1], control=True, kind="mlp", hidden=12),
        TrainConfig(epochs=2, batch_size=16, threads=2),
    ),
}
# no budget; groups of 2 sites, the next read while one trains; groups of one site read in turn
BUDGETS = {"all-sites": None, "groups-of-two": 4 * SITE_BYTES, "one-site-at-a-time": SITE_BYTES}


@pytest.mark.parametrize("budget", BUDGETS.values(), ids=BUDGETS.keys())
@pytest.mark.parametrize("name", GRIDS)
def test_fit_probes_on_a_feature_set_equals_the_tensor_fit(
    data: Synthetic, folder: Path, name: str, budget: int | None, held: list[tuple[int, int]]
) -> None:
    grid, config = GRIDS[name]
    splits = random_splits(N, seed=1)
    options = {"keys": data.keys, "progress": False}
    ref = fit_probes(data.feats, data.labels, splits, grid, config, site_names=NAMES, **options)
    features = counting(folder)
    got = fit_probes(features, data.labels, splits, grid, replace(config, memory=budget), **options)
    assert_same_results(ref, got)
    # every site of the grid read once, whole; never more than the budget's share at once
    sites = [s for chosen, _, _ in features.reads for s in chosen]
    assert sorted(sites) == sorted(grid.layout(SITES).sites)
    assert all(rows == N for _, rows, _ in features.reads)
    plan = plan_sites(len(grid.layout(SITES).sites), SITE_BYTES, budget)
    assert len(features.reads) == len(plan.groups)
    if budget is not None:  # two groups fit the budget: one trains while the next is read
        at_once = 2 if plan.prefetch else 1
        assert all(at_once * len(c) * SITE_BYTES <= budget for c, _, _ in features.reads)
        # groups the fit still held as each read began
        assert max(still for _, still in held) == at_once - 1


@pytest.mark.parametrize("name", ["per-seed-order", "shared-order-mdl-some-sites"])
def test_a_float16_feature_set_trains_as_its_float32_values(
    data: Synthetic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    grid, config = GRIDS[name]
    path = tmp_path / "fs16"
    FeatureSet.write(path, [data.feats], NAMES, dtype=torch.float16, shard_size=32)
    features = counting(path)
    values = features.to_tensor()  # the float32 values of the stored float16
    splits = random_splits(N, seed=1)
    options = {"keys": data.keys, "progress": False}
    ref = fit_probes(values, data.labels, splits, grid, config, site_names=NAMES, **options)
    monkeypatch.setattr(site_reader, "READ_BYTES", 2 * 32 * DIM * 4)  # 2 shards per read
    features.reads = []
    budget = 2 * SITE_BYTES  # two sites of float16 per group, two groups held
    got = fit_probes(features, data.labels, splits, grid, replace(config, memory=budget), **options)
    assert_same_results(ref, got)
    assert len(features.reads) > len(grid.layout(SITES).sites) // 2  # several reads per group


def test_fit_probes_streams_item_blocks_where_one_site_does_not_fit(
    data: Synthetic, folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    grid = ProbeGrid(seeds=[0, 3], control=True, sites=[1, 3], train_fractions=(1.0, 0.5))
    config = TrainConfig(epochs=2, batch_size=1)
    splits = random_splits(N, seed=1)
    options = {"keys": data.keys, "progress": False}
    ref = fit_probes(data.feats, data.labels, splits, grid, config, site_names=NAMES, **options)
    features = counting(folder)
    budget = SITE_BYTES * 9 // 10
    with caplog.at_level(logging.INFO, logger="probes"):
        got = fit_probes(
            features, data.labels, splits, grid, replace(config, memory=budget), **options
        )
    assert_same_results(ref, got)
    assert "one read of its features per epoch" in caplog.text
    assert all(rows * DIM * 4 * len(chosen) < budget for chosen, rows, _ in features.reads)
    # the parts of each epoch read in the background while the part before trains
    parts = [rows for _, rows, thread in features.reads if thread.startswith("features")]
    assert len(parts) >= 2 * config.epochs * 2  # 2 sites, 2 epochs, several parts each


def test_streaming_refuses_a_budget_smaller_than_two_parts(data: Synthetic, folder: Path) -> None:
    config = TrainConfig(epochs=1, batch_size=16, memory=SITE_BYTES // 2)
    with pytest.raises(ProbeConfigError, match="too small to stream"):
        fit_probes(
            FeatureSet.open(folder),
            data.labels,
            random_splits(N),
            ProbeGrid(seeds=[0]),
            config,
            progress=False,
        )


def labels_per_site(data: Synthetic) -> Tensor:
    """[probe, item]: the task and a shuffled control at each site (two probes per site)."""
    shuffled = data.labels[torch.randperm(N, generator=torch.Generator().manual_seed(0))]
    return torch.stack([data.labels, shuffled] * SITES)


@pytest.mark.parametrize("polish", [False, True], ids=["float32", "polished"])
@pytest.mark.parametrize("budget", BUDGETS.values(), ids=BUDGETS.keys())
def test_logistic_regression_on_a_feature_set_equals_the_tensor_fit(
    data: Synthetic, folder: Path, budget: int | None, polish: bool
) -> None:
    y = labels_per_site(data)
    ref = fit_logistic_regression(data.feats.transpose(0, 1).contiguous(), y, polish=polish)
    features = counting(folder)
    memory = None if budget is None else budget * (3 if polish else 1)
    got = fit_logistic_regression(features, y, polish=polish, memory=memory)
    for field in ref.__dataclass_fields__:
        assert torch.equal(getattr(ref, field), getattr(got, field)), field
    assert sorted(s for chosen, _, _ in features.reads for s in chosen) == list(range(SITES))


def test_logistic_regression_refuses_a_budget_below_one_site(data: Synthetic, folder: Path) -> None:
    with pytest.raises(ProbeConfigError, match="memory of at least"):
        fit_logistic_regression(
            FeatureSet.open(folder), labels_per_site(data), memory=SITE_BYTES // 2
        )
    with pytest.raises(ProbeConfigError, match="memory"):
        fit_logistic_regression(
            data.feats.transpose(0, 1), labels_per_site(data), memory="4 parsecs"
        )


def test_site_groups_leave_room_for_the_next_read() -> None:
    assert plan_sites(5, 100, None).groups == ((0, 1, 2, 3, 4),)
    assert plan_sites(5, 100, 500).groups == ((0, 1, 2, 3, 4),)
    two = plan_sites(5, 100, 400)  # two groups of two held at once
    assert two.groups == ((0, 1), (2, 3), (4,)) and two.prefetch and not two.streamed
    alone = plan_sites(5, 100, 150)  # one site fits, not two: read in turn
    assert alone.groups == tuple((s,) for s in range(5)) and not alone.prefetch
    assert plan_sites(5, 100, 99).streamed


@pytest.mark.parametrize(
    ("value", "expected"),
    [(4096, 4096), ("4GiB", 4 * 2**30), ("1.5 GB", 1_500_000_000), ("12kb", 12_000), (None, None)],
)
def test_memory_takes_bytes_and_sizes_with_units(
    value: int | str | None, expected: int | None
) -> None:
    assert TrainConfig(memory=value).memory_bytes == expected


@pytest.mark.parametrize("value", ["4XB", "GiB", "", 0, -1, "0.1B", "-4GiB"])
def test_memory_refuses_what_is_not_a_size(value: object) -> None:
    with pytest.raises(ProbeConfigError, match=r"TrainConfig\.memory=.*e\.g\. memory='4GiB'"):
        TrainConfig(memory=value)  # type: ignore[arg-type]


def test_structural_probes_on_a_feature_set_equal_the_tensor_fit(tmp_path: Path) -> None:
    data = embedded_trees(30, seed=2, noise=0.3)
    features = FeatureSet.write(tmp_path / "fs", [data.feats], ["a", "b"], shard_size=50)
    config = StructuralConfig(epochs=3, batch_size=6)
    grid = StructuralGrid(seeds=(0, 5), ranks=(None, 3), sites=(1,))
    ref = fit_structural_probes(
        data.feats.float(), data.trees, data.splits, "distance", grid, config
    )
    got = fit_structural_probes(features, data.trees, data.splits, "distance", grid, config)
    assert torch.equal(ref.weights, got.weights)
    assert ref.table().equals(got.table())


def test_erasure_fits_on_a_feature_set_equal_the_tensor_fits(tmp_path: Path) -> None:
    feats, z, task = concept_data(n=600, sites=2, dim=6)
    feats = feats.float()  # what the FeatureSet holds and reads
    features = FeatureSet.write(
        tmp_path / "fs", [feats[:250], feats[250:]], ["a", "b"], shard_size=128
    )
    leace, from_disk = fit_leace(feats, z), fit_leace(features, z)
    for name in ("left", "right", "mean"):  # one site's mean read alone: float64 reassociation
        torch.testing.assert_close(
            getattr(from_disk, name), getattr(leace, name), rtol=1e-9, atol=1e-12
        )
    assert torch.equal(leace(features), leace(feats))
    codes = torch.zeros(600, dtype=torch.long)
    codes[400:500], codes[500:] = 1, 2
    inlp = fit_inlp(feats, z, codes, iterations=2)
    inlp_disk = fit_inlp(features, z, codes, iterations=2)
    assert inlp.history.equals(inlp_disk.history)
    assert torch.equal(inlp.eraser.projection(), inlp_disk.eraser.projection())
    grid, config = ProbeGrid(seeds=(0,)), TrainConfig(epochs=2, memory=600 * 6 * 4)
    erasers = {"leace": leace}
    table = erase_then_probe(feats, task, codes, erasers, grid, config, progress=False)
    table_disk = erase_then_probe(features, task, codes, erasers, grid, config, progress=False)
    assert table.equals(table_disk)
