"""Suites run with `--store` and `--memory` train from a `FeatureSet`: the same rows as the run
that holds its features in memory, and the whole `[item, site, dim]` tensor is never built."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import internals.subject
import suites.probing
from lingprobe.feature_set import FeatureSet
from suites.cli import main

COMMON = ["--models", "minilm", "--layers", "all", "--seeds", "2", "--epochs", "2"]
COMMON += ["--quiet", "--data", "samples"]
EDGE = ["edge", "--task", "conllu:deprel", "--train-file", "ud-english-ewt:train"]
EDGE += ["--test-file", "ud-english-ewt:dev", "--limit-sentences", "12"]
STRUCTURAL = ["structural", "--train-sentences", "12", "--dev-sentences", "6"]
STRUCTURAL += ["--test-sentences", "8"]
RUNS = {
    # sentences, no reduction: the store's shards are the feature set
    "holmes": (["holmes", "--tasks", "blimp-causative", "--limit-blimp-pairs", "40"], "500KiB"),
    # two spans per item, their mean: a derived feature set streamed beside the shards
    "edge-deprel": (EDGE, "3MiB"),
    # words at every layer (7 sites of about 0.8 MiB): the structural probes in groups of two
    "structural": (STRUCTURAL, "4MiB"),
}


class Spy:
    """Records every extraction's `lazy` and every `FeatureSet.read`'s (items, sites, total)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.lazy: list[bool] = []
        self.reads: list[tuple[int, int, tuple[int, int, int]]] = []
        extract, read = internals.subject.extract_features, FeatureSet.read

        def extract_spy(*args: Any, **kwargs: Any) -> Any:
            self.lazy.append(bool(kwargs.get("lazy")))
            return extract(*args, **kwargs)

        def read_spy(fs: FeatureSet, *args: Any, **kwargs: Any) -> Any:
            out = read(fs, *args, **kwargs)
            self.reads.append((out.shape[0], out.shape[1], fs.shape))
            return out

        def no_tensor(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("task_features materialises every feature in one tensor")

        monkeypatch.setattr(internals.subject, "extract_features", extract_spy)
        monkeypatch.setattr(FeatureSet, "read", read_spy)
        monkeypatch.setattr(suites.probing, "task_features", no_tensor)
        monkeypatch.setattr("suites.edge.experiment.task_features", no_tensor)


def run(argv: list[str], out: Path, store: Path, memory: str | None) -> pl.DataFrame:
    flags = ["--out", str(out), "--store", str(store)]
    flags += ["--memory", memory] if memory is not None else []
    assert main(["run", *argv, *COMMON, *flags]) == 0
    return pl.read_parquet(out / "results.parquet").drop("unit")


@pytest.mark.slow
@pytest.mark.parametrize("name", RUNS)
def test_a_suite_under_a_memory_budget_trains_from_the_store(tmp_path, monkeypatch, name):
    argv, memory = RUNS[name]
    in_memory = run(argv, tmp_path / "memory", tmp_path / "store-memory", None)
    spy = Spy(monkeypatch)
    on_disk = run(argv, tmp_path / "disk", tmp_path / "store-disk", memory)
    # float32 tolerances of the trainer tests; the structural probes compute on the same float32
    # values in the same order whatever the groups: bit for bit
    assert_frame_equal(on_disk, in_memory, check_exact=name == "structural")
    assert spy.lazy and all(spy.lazy)  # every extraction wrote shards and kept none
    assert spy.reads, "the probes read no FeatureSet"
    # no read held every item at every site; the probes read whole sites in groups the budget
    # cut (a derived set is written from blocks of items at every site)
    for items, sites, (total_items, total_sites, _) in spy.reads:
        assert not (items == total_items and sites == total_sites)
    groups = [sites for items, sites, shape in spy.reads if items == shape[0]]
    assert groups and max(groups) < spy.reads[0][2][1]
