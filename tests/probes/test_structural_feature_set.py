"""Structural probes read from a `FeatureSet` under `StructuralConfig.memory`: groups of sites
that fit the budget, each trained to the end, give the fit of every site as a tensor bit for
bit, and a budget below one site is refused."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
import torch

from lingprobe.feature_set import FeatureSet
from probes import ProbeConfigError
from probes.structural import (
    StructuralConfig,
    StructuralGrid,
    StructuralResults,
    _site_groups,
    fit_structural_probes,
)
from tests.probes.group_reads import record_group_reads
from tests.probes.structural_data import EmbeddedTrees, embedded_trees

# lr 0.05 and a patience of 1: probes stop between epochs 3 and 12, each group of sites at
# its own epoch, and some learning rates are cut (the regimen's state is per probe)
CONFIG = StructuralConfig(epochs=20, batch_size=6, lr=0.05, stop_patience=1)
GRID = StructuralGrid(seeds=(0, 5), ranks=(None, 3), sites=(4, 0, 2, 5, 1))


@pytest.fixture(scope="module")
def data() -> EmbeddedTrees:
    """40 sentences at 6 sites: noise, the trees, scaled and shifted copies, reversed."""
    base = embedded_trees(40, seed=2, noise=0.3)
    feats = torch.cat([base.feats, base.feats * 0.5 + 0.1, base.feats.flip(1)], dim=1)
    return EmbeddedTrees(base.trees, feats, base.splits)


@pytest.fixture(scope="module")
def folder(data: EmbeddedTrees, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("structural") / "fs"
    names = [f"layer.{i}" for i in range(data.feats.shape[1])]
    FeatureSet.write(path, [data.feats[:100], data.feats[100:]], names, shard_size=64)
    return path


def site_bytes(data: EmbeddedTrees) -> int:
    return data.feats.shape[0] * data.feats.shape[2] * 4


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """(sites read, groups still held) as each group's read begins."""
    return record_group_reads(monkeypatch, _site_groups)


def assert_same(a: StructuralResults, b: StructuralResults) -> None:
    """Every number and frame of two fits equal, bit for bit."""
    assert a.kind == b.kind
    assert a.probes.equals(b.probes)
    assert a.metrics.equals(b.metrics)
    assert a.table().equals(b.table())
    assert torch.equal(a.weights, b.weights)


# sites per group: every site at once; two, the next read while one trains; one at a time
BUDGETS = {
    "all-sites": (None, [5]),
    "groups-of-two": (4, [2, 2, 1]),
    "one-site-at-a-time": (1, [1, 1, 1, 1, 1]),
}


@pytest.mark.parametrize("budget", BUDGETS, ids=BUDGETS.keys())
@pytest.mark.parametrize("kind", ["distance", "depth"])
def test_a_feature_set_under_a_budget_gives_the_tensor_fit(
    data: EmbeddedTrees, folder: Path, kind: str, budget: str, held: list[tuple[int, int]]
) -> None:
    sites, groups = BUDGETS[budget]
    memory = None if sites is None else sites * site_bytes(data)
    ref = fit_structural_probes(
        data.feats, data.trees, data.splits, kind, GRID, CONFIG, progress=False
    )
    config = replace(CONFIG, memory=memory)
    got = fit_structural_probes(
        FeatureSet.open(folder), data.trees, data.splits, kind, GRID, config, progress=False
    )
    assert_same(got, ref)
    # every grid site read once, in groups, never more sites held than the budget allows
    assert [n for n, _ in held] == groups
    if memory is not None:
        assert all((n + before * groups[0]) * site_bytes(data) <= memory for n, before in held)
    # the groups stop at different epochs, so a group's fit ends before the grid's would
    stops = ref.probes.group_by("site").agg(last=pl.col("epochs").max())["last"]
    assert stops.n_unique() > 1
    # a tensor is already in memory: the budget does not change its fit
    in_memory = fit_structural_probes(
        data.feats, data.trees, data.splits, kind, GRID, config, progress=False
    )
    assert_same(in_memory, ref)


def test_a_budget_below_one_site_is_refused(data: EmbeddedTrees, folder: Path) -> None:
    need = site_bytes(data)
    config = StructuralConfig(epochs=1, memory=need - 1)
    with pytest.raises(
        ProbeConfigError,
        match=rf"StructuralConfig\.memory={need - 1} \(.*\) is less than one site's features"
        rf" .*{data.feats.shape[0]} words x {data.feats.shape[2]} floats.* give memory >= {need}"
        " bytes",
    ):
        fit_structural_probes(
            FeatureSet.open(folder), data.trees, data.splits, grid=GRID, config=config
        )


@pytest.mark.parametrize(("value", "expected"), [(None, None), (1000, 1000), ("4GiB", 4 << 30)])
def test_memory_takes_bytes_and_sizes(value: int | str | None, expected: int | None) -> None:
    assert StructuralConfig(memory=value).memory_bytes == expected


@pytest.mark.parametrize("value", ["4XB", 0, -1, "0.1B"])
def test_memory_refuses_what_is_not_a_size(value: int | str) -> None:
    with pytest.raises(ProbeConfigError, match=r"StructuralConfig\.memory=.*e\.g\. memory='4GiB'"):
        StructuralConfig(memory=value)
