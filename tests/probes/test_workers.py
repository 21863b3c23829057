"""The worker pool: each worker computes with one intra-op thread."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from probes.workers import worker_pool

TASKS = Path("/proc/self/task")  # one entry per OS thread of this process (Linux)


def threads_now() -> int:
    return len(list(TASKS.iterdir()))


@pytest.mark.skipif(not TASKS.is_dir(), reason="counts threads through Linux's /proc")
def test_workers_run_gemms_and_loops_on_their_own_thread_only() -> None:
    # torch.set_num_threads(1) in the caller does not reach new threads (OpenMP and MKL keep the
    # setting per thread): a worker that kept the default would start its own team of OpenMP
    # threads for every GEMM, and the workers together would oversubscribe the cores
    a = torch.randn(256, 256)
    before = threads_now()
    with worker_pool(2) as pool:
        pool.map(lambda _: (a @ a).softmax(dim=1).sum(), range(8))
        during = threads_now()
    assert during - before == 2  # the two workers, and no thread started by their work
