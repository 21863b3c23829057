"""`ProbeResults.save` killed at random points (SIGKILL, >= 20 trials) never loads as a mixture:
`load` returns the old complete results or raises `ResultsDamagedError` ("damaged"); a file
changed after saving is named."""

from __future__ import annotations

import multiprocessing
import random
import time
from pathlib import Path

import pytest
import torch
from polars.testing import assert_frame_equal

from probes import MDLBlocks, ProbeGrid, ProbeResults, TrainConfig, fit_probes, random_splits
from probes.errors import ResultsDamagedError
from tests.probes.conftest import make_synthetic

TRIALS = 24


def save_forever(old: str, new: str, target: str, pause: float, ready) -> None:  # the child
    """Save the new and the old results in turn, pausing between saves, until killed."""
    first, second = ProbeResults.load(old), ProbeResults.load(new)
    ready.set()
    while True:
        second.save(target)
        time.sleep(pause)
        first.save(target)
        time.sleep(pause)


def fit(seeds, mdl, sites_signal_seed):
    data = make_synthetic(seed=sites_signal_seed)
    grid = ProbeGrid(seeds=seeds, control=True, mdl=MDLBlocks((0.5, 1.0)) if mdl else False)
    config = TrainConfig(epochs=2, batch_size=32)
    return fit_probes(
        data.feats, data.labels, random_splits(240), grid, config, keys=data.keys, progress=False
    )


def same(a: ProbeResults, b: ProbeResults) -> bool:
    if (a.codelengths is None) != (b.codelengths is None) or a.weights.keys() != b.weights.keys():
        return False
    try:
        assert_frame_equal(a.probes, b.probes)
        assert_frame_equal(a.metrics, b.metrics)
        if a.codelengths is not None:
            assert_frame_equal(a.codelengths, b.codelengths)
    except AssertionError:
        return False
    return all(torch.equal(a.weights[n], b.weights[n]) for n in a.weights)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    old, new = fit([0, 1], True, 0), fit([2], False, 1)  # every file differs; new lacks MDL
    old.save(folder / "old")
    new.save(folder / "new")
    return folder, old, new


def test_killed_save_loads_old_new_or_damaged(two_runs):
    folder, old, new = two_runs
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["probes", "polars", "safetensors.torch"])
    rng = random.Random(0)
    start = time.perf_counter()
    for _ in range(5):
        new.save(folder / "timing")
    one_save = (time.perf_counter() - start) / 5
    outcomes = []
    for trial in range(TRIALS):
        target = folder / f"trial-{trial}"
        old.save(target)
        ready = context.Event()
        child = context.Process(
            target=save_forever,
            args=(str(folder / "old"), str(folder / "new"), str(target), one_save, ready),
        )
        child.start()
        assert ready.wait(60), "the writer process did not start"
        time.sleep(rng.uniform(0, 4 * one_save))
        child.kill()
        child.join(30)
        assert child.exitcode == -9
        try:
            loaded = ProbeResults.load(target)
        except ResultsDamagedError as error:
            assert "damaged" in str(error)
            outcomes.append("damaged")
            continue
        assert same(loaded, old) or same(loaded, new), f"trial {trial}: a mixture loaded"
        outcomes.append("old" if same(loaded, old) else "new")


def test_a_changed_file_is_named(two_runs, tmp_path):
    _, old, _ = two_runs
    old.save(tmp_path)
    path = tmp_path / "metrics.parquet"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(ResultsDamagedError, match=r"metrics\.parquet is damaged"):
        ProbeResults.load(tmp_path)


def test_a_missing_file_or_manifest_is_named(two_runs, tmp_path):
    _, old, _ = two_runs
    old.save(tmp_path)
    (tmp_path / "codelengths.parquet").unlink()
    with pytest.raises(ResultsDamagedError, match=r"codelengths\.parquet is missing"):
        ProbeResults.load(tmp_path)
    (tmp_path / "manifest.json").unlink()
    with pytest.raises(ResultsDamagedError, match="damaged or incomplete: it has no manifest"):
        ProbeResults.load(tmp_path)


def test_a_save_without_mdl_removes_the_old_codelengths(two_runs, tmp_path):
    _, old, new = two_runs
    old.save(tmp_path)
    new.save(tmp_path)
    assert not (tmp_path / "codelengths.parquet").exists()
    assert same(ProbeResults.load(tmp_path), new)


def test_a_crafted_manifest_cannot_point_outside_the_folder(two_runs, tmp_path):
    _, old, _ = two_runs
    old.save(tmp_path)
    (tmp_path / "manifest.json").write_text(
        '{"format": "lingprobe-results/1", "files": {"../secret": {"bytes": 1, "xxh3": "0"}}}'
    )
    with pytest.raises(ResultsDamagedError, match="listing only"):
        ProbeResults.load(tmp_path)


def test_results_folder_path_is_a_file(two_runs, tmp_path):
    _, old, _ = two_runs
    (tmp_path / "file").write_text("x")
    with pytest.raises(Exception, match="is a file"):
        old.save(tmp_path / "file")
    assert Path(tmp_path / "file").read_text() == "x"
