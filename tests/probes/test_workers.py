"""The worker pool: each worker computes with one intra-op thread."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
import torch

from probes._grid import workers
from probes._grid.workers import worker_pool
from probes.errors import ProbeConfigError

TASKS = Path("/proc/self/task")  # one entry per OS thread of this process (Linux)


def threads_now() -> int:
    return len(list(TASKS.iterdir()))


@pytest.mark.skipif(not TASKS.is_dir(), reason="counts threads through Linux's /proc")
def test_workers_run_gemms_and_loops_on_their_own_thread_only() -> None:
    # torch.set_num_threads(1) in the caller does not reach new threads (OpenMP and MKL keep the
    # setting per thread): a worker that kept the default would start its own team of OpenMP
    # threads for every GEMM, and the workers together would oversubscribe the cores
    a = torch.randn(256, 256, generator=torch.Generator().manual_seed(0))
    before = threads_now()
    with worker_pool(2) as pool:
        pool.map(lambda _: (a @ a).softmax(dim=1).sum(), range(8))
        during = threads_now()
    assert during - before == 2  # the two workers, and no thread started by their work


def affinity_of_each_worker(pool_threads: int) -> tuple[set[int], list[set[int]]]:
    """The calling thread's CPUs during the fit, and each worker's own (one call per worker)."""
    barrier = threading.Barrier(pool_threads)

    def own_cpus(_: int) -> set[int]:
        barrier.wait(timeout=10)  # every worker takes exactly one block
        return os.sched_getaffinity(0)

    with worker_pool(pool_threads) as pool:
        caller = os.sched_getaffinity(0)
        seen = pool.map(own_cpus, range(pool_threads))
    return caller, seen


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux's")
def test_workers_are_pinned_one_per_cpu_and_the_caller_is_left_alone(monkeypatch) -> None:
    cpu = min(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    # two workers for two (here: the same real) CPUs, so this runs on a one-CPU machine too
    monkeypatch.setattr(workers, "worker_cpus", lambda n: [cpu] * n)
    caller, seen = affinity_of_each_worker(2)
    assert seen == [{cpu}, {cpu}]
    assert caller == before == os.sched_getaffinity(0)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux's")
def test_a_cpu_that_cannot_be_taken_leaves_the_workers_unpinned(monkeypatch) -> None:
    def refuse(pid: int, cpus: set[int]) -> None:
        raise OSError(22, "Invalid argument")

    before = os.sched_getaffinity(0)
    monkeypatch.setattr(workers, "worker_cpus", lambda n: [min(before)] * n)
    monkeypatch.setattr(os, "sched_setaffinity", refuse)
    _, seen = affinity_of_each_worker(2)  # the pool works: a failed initializer would break it
    assert seen == [before, before]


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux's")
def test_workers_are_not_pinned_when_turned_off(monkeypatch) -> None:
    monkeypatch.setenv(workers.PIN_VARIABLE, "0")
    before = os.sched_getaffinity(0)
    _, seen = affinity_of_each_worker(2)
    assert seen == [before, before]


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux's")
def test_workers_are_pinned_only_when_there_is_one_for_every_allowed_cpu(monkeypatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3, 1})
    monkeypatch.delenv(workers.PIN_VARIABLE, raising=False)
    assert workers.worker_cpus(2) == [1, 3]
    assert workers.worker_cpus(3) is None  # more workers than CPUs: the kernel places them
    assert workers.worker_cpus(1) is None
    monkeypatch.setenv(workers.PIN_VARIABLE, "0")
    assert workers.worker_cpus(2) is None


def test_a_bad_pin_setting_names_the_variable_and_the_choices(monkeypatch) -> None:
    monkeypatch.setenv(workers.PIN_VARIABLE, "yes")
    before = torch.get_num_threads()
    with (
        pytest.raises(ProbeConfigError, match=r"LINGPROBE_PIN_THREADS='yes': give 1 .* or 0"),
        worker_pool(2),
    ):
        pass
    assert torch.get_num_threads() == before
