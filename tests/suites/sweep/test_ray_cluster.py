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

from suites.sweep import read_log, run_sweep
from tests.suites.sweep.conftest import LOOPBACK, loopback_ray, write_sweep

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


def running_a_unit(node: Any) -> bool:
    """Whether a process of `node` is inside `RayWorker.run` (Ray names the process after the
    method it runs)."""
    raylet = node.all_processes["raylet"][0].process.pid
    try:
        children = psutil.Process(raylet).children(recursive=True)
    except psutil.NoSuchProcess:
        return False
    for child in children:
        try:
            if "RayWorker.run" in " ".join(child.cmdline()):
                return True
        except psutil.Error:
            continue
    return False


def remove_a_busy_node(
    cluster: Any, workers: list[Any], units: Path, removed: list[Any], stop: threading.Event
) -> None:
    """Remove the first worker node seen running a unit once a unit folder exists."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline and not stop.is_set():
        if units.is_dir() and any(units.iterdir()):
            for node in workers:
                if running_a_unit(node):
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
