"""A Ray cluster that loses a node in the middle of a sweep.

A head (no CPUs: it runs no worker) and two worker nodes of one CPU each, all on 127.0.0.1
(`ray.cluster_utils.Cluster`), run the small two-model sweep; once a unit runs on a worker node
and a unit folder has been written, that node is removed with everything on it. Ray restarts the
dead worker on the other node, where the lost unit runs again: every unit ends done, none
failed, and the leaderboard equals the local run's.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import torch

from internals import SpanItem, load_subject, store_run
from suites.sweep import read_log, run_sweep
from suites.sweep.config import ModelSpec
from suites.sweep.ray_extract import extract_on_ray
from suites.sweep.worker import unit_threads
from tests.suites.sweep.conftest import LOOPBACK, loopback_ray, write_sweep
from tests.suites.sweep.test_ray_extract import WORDS

ray = pytest.importorskip("ray")
psutil = pytest.importorskip("psutil")

WAIT_S = 300.0  # the removal must happen within this; the sweep itself takes about a minute


@pytest.fixture
def cluster():
    """(cluster, its two worker nodes), the driver connected; every node on 127.0.0.1."""
    from ray.cluster_utils import Cluster

    assert not ray.is_initialized()
    with loopback_ray():
        cluster = Cluster(
            initialize_head=True,
            head_node_args={
                "num_cpus": 0,
                "node_ip_address": LOOPBACK,
                "include_dashboard": False,
            },
        )
        try:
            # the head wrote its address where a bare ray.init() on this machine would join it
            ray._common.utils.reset_ray_address()
            workers = [cluster.add_node(num_cpus=1, node_ip_address=LOOPBACK) for _ in range(2)]
            ray.init(address=cluster.address, _node_ip_address=LOOPBACK, log_to_driver=False)
            yield cluster, workers
        finally:
            ray.shutdown()
            cluster.shutdown()


def running_a_unit(node: Any, method: str = "RayWorker.run") -> bool:
    """Whether a process of `node` is inside `method` (Ray names the process after the method
    it runs)."""
    raylet = node.all_processes["raylet"][0].process.pid
    try:
        children = psutil.Process(raylet).children(recursive=True)
    except psutil.NoSuchProcess:
        return False
    for child in children:
        try:
            if method in " ".join(child.cmdline()):
                return True
        except psutil.Error:
            continue
    return False


def remove_a_busy_node(
    cluster: Any,
    workers: list[Any],
    units: Path,
    removed: list[Any],
    stop: threading.Event,
    method: str = "RayWorker.run",
    written: str = "*",
) -> None:
    """Remove the first worker node seen inside `method` once `units` holds a `written` file."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline and not stop.is_set():
        if units.is_dir() and any(units.rglob(written)):
            for node in workers:
                if running_a_unit(node, method):
                    cluster.remove_node(node)
                    removed.append(node)
                    return
        time.sleep(0.05)


@pytest.mark.slow
def test_a_sweep_that_loses_a_node_ends_with_every_unit_done(cluster, tmp_path, local_sweep):
    head, workers = cluster
    config = write_sweep(tmp_path, "cluster", executor="ray")
    removed: list[Any] = []
    stop = threading.Event()
    units = tmp_path / "cluster" / "units"
    remover = threading.Thread(
        target=remove_a_busy_node, args=(head, workers, units, removed, stop)
    )
    remover.start()
    start = time.perf_counter()
    try:
        summary = run_sweep(config, progress=False)
    finally:
        stop.set()
        remover.join()
    seconds = time.perf_counter() - start
    assert len(removed) == 1, "no worker node was seen running a unit"
    assert len(ray.nodes()) == 3 and sum(n["Alive"] for n in ray.nodes()) == 2
    assert (summary.planned, summary.ran, summary.done, summary.failed) == (6, 6, 6, 0)
    assert summary.leaderboard.equals(local_sweep[1].leaderboard)
    log = read_log(tmp_path / "cluster")
    done = log.filter(pl.col("event") == "done")
    assert done.height == 6 and log.filter(pl.col("event") == "failed").height == 0
    # the unit the removed node held ran again on a restarted worker
    assert done["restarted"].sum() >= 1
    print(f"sweep on a 3-node cluster that lost a node: {seconds:.1f} s")


@pytest.mark.slow
def test_an_extraction_that_loses_a_node_equals_one_process(cluster, tmp_path, monkeypatch):
    """`extract_on_ray` on two worker nodes, one removed once a shard is written: Ray restarts
    its worker on the other node, which computes that run again (keeping its finished shards),
    and the feature set equals one process's extraction."""
    items = [SpanItem(f"{w.text} ({copy})", spans=w.spans) for copy in range(12) for w in WORDS]
    window = 8 * 2 * 384 * 4  # one shard of 8 words at 2 sites: a forward pass per shard
    store = tmp_path / "store"
    head, workers = cluster
    removed: list[Any] = []
    stop = threading.Event()
    remover = threading.Thread(
        target=remove_a_busy_node,
        args=(head, workers, store, removed, stop, "Extractor.extract", "shard-*.safetensors"),
    )
    remover.start()
    try:
        fs = extract_on_ray(
            ModelSpec("minilm", "minilm"), items, [2, 6], store, workers=2, shard_size=8,
            window_bytes=window,
        )  # fmt: skip
    finally:
        stop.set()
        remover.join()
    assert len(removed) == 1, "no worker node was seen extracting"
    assert sum(n["Alive"] for n in ray.nodes()) == 2
    monkeypatch.setattr(store_run, "WINDOW_BYTES", window)
    with unit_threads(1):
        alone = load_subject("minilm").features(
            items, [2, 6], store=tmp_path / "alone", shard_size=8, progress=False, lazy=True
        )
    assert fs.shape == alone.shape == (len(items), 2, 384)
    assert torch.equal(fs.to_tensor(), alone.to_tensor())
