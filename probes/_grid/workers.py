"""How the fits use the CPU: independent blocks of work on a pool of threads.

torch's intra-op parallelism splits every operation between its threads and waits at the end of
each one. When another process takes a core, the thread sharing that core stalls every such
barrier, and a fit made of many small operations slows down several-fold. The fits instead cut
their work into many independent blocks (row blocks of a feature block, groups of probes) that
`threads` worker threads pull from one queue, each computing with a single intra-op thread: a
worker slowed by another process simply takes fewer blocks, and nothing waits on it except at
the end of a whole evaluation. Blocks are fixed by the data, not by the number of workers, and
their partial results are combined in a fixed order, so results do not depend on `threads`.
(A step with fewer blocks than workers runs them one by one with `threads` intra-op threads, so
a lone block still uses every core; there, as in any torch code, a kernel may round differently
with another thread count.)

`threads=None` takes torch's current setting (`torch.get_num_threads()`). Inside a fit, torch's
intra-op threads are set to 1 and the caller's setting is restored afterwards.

With one worker for every CPU the process may use (Linux), worker i is pinned to the i-th of those
CPUs for the fit's duration. Unpinned, the kernel often leaves two workers sharing a CPU when
another process is running, so the fit gets one core instead of one and a half: beside one busy
process on 2 CPUs, pinning took the slow-down from 1.49-1.57x to 1.32-1.42x. The workers still
cover every CPU, so two pinned fits share each CPU evenly. `LINGPROBE_PIN_THREADS=0` turns it off.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager, suppress
from typing import TypeVar

import torch

from probes._grid.chunk_schedule import ChunkSchedule, Task
from probes.errors import ProbeConfigError

T = TypeVar("T")
R = TypeVar("R")


class WorkerPool:
    """Maps a function over independent blocks on the pool's threads (in order, results in
    the blocks' order)."""

    def __init__(self, executor: ThreadPoolExecutor | None, workers: int) -> None:
        self.executor = executor
        self.workers = workers

    def map(self, fn: Callable[[T], R], blocks: Iterable[T]) -> list[R]:
        """`[fn(b) for b in blocks]`, computed by the workers; with fewer blocks than workers,
        one after the other on the calling thread with `workers` intra-op threads instead (so
        a lone block still uses every core)."""
        chosen = list(blocks)
        if self.executor is None:
            return [fn(b) for b in chosen]
        if len(chosen) < self.workers:
            with self._every_thread():
                return [fn(b) for b in chosen]
        return list(self.executor.map(fn, chosen))

    @contextmanager
    def _every_thread(self) -> Iterator[None]:
        """Work on the calling thread with all `workers` intra-op threads (workers run with one)."""
        torch.set_num_threads(self.workers)
        try:
            yield
        finally:
            torch.set_num_threads(1)

    def drain(self, schedule: ChunkSchedule, run: Callable[[Task], object], width: int) -> None:
        """Run every task of `schedule` (`run(task)`) on up to `width` workers (the tasks that
        can run at once, e.g. blocks plus dropout streams: more workers would wait), each taking
        the next ready task itself, with no barrier between tasks. Below two such workers, the
        calling thread runs them all with `workers` intra-op threads (as `map` does for a lone
        block)."""
        n = min(self.workers, width)

        def loop() -> None:
            while (task := schedule.take()) is not None:
                try:
                    run(task)
                except BaseException as error:
                    schedule.fail(error)
                    raise
                schedule.done(task)

        if self.executor is None or n < 2:
            with self._every_thread():
                loop()
            return
        futures = [self.executor.submit(loop) for _ in range(n)]
        try:
            for future in futures:
                future.result()
        except BaseException as error:  # a task failed, or Ctrl-C here: stop the others first
            schedule.fail(error)
            wait(futures)
            raise


PIN_VARIABLE = "LINGPROBE_PIN_THREADS"


def _one_thread(cpus: Iterator[int] | None) -> None:
    """A worker's own intra-op setting, and its CPU when `cpus` are given (the next one). The
    caller's `torch.set_num_threads(1)` does not reach new threads: OpenMP and MKL keep the
    setting per thread, so a worker would otherwise run each GEMM (MKL, oneDNN) and OpenMP loop
    with every core, several workers oversubscribing the cores."""
    torch.set_num_threads(1)
    if cpus is not None:
        # 0: this thread (Linux); a CPU gone since (hotplug, a changed cpuset): run unpinned
        with suppress(OSError):
            os.sched_setaffinity(0, {next(cpus)})


def worker_cpus(n: int) -> list[int] | None:
    """The CPUs that `n` workers are pinned to, one each: this thread's allowed CPUs when there
    are exactly `n` of them (n >= 2, Linux) and `LINGPROBE_PIN_THREADS` is not 0; else None."""
    setting = os.environ.get(PIN_VARIABLE, "1")
    if setting not in ("0", "1"):
        raise ProbeConfigError(
            f"{PIN_VARIABLE}={setting!r}: give 1 (pin one worker per CPU when there are as many"
            " workers as CPUs, the default) or 0 (never pin)."
        )
    if setting == "0" or n < 2 or not hasattr(os, "sched_setaffinity"):
        return None
    allowed = sorted(os.sched_getaffinity(0))
    return allowed if len(allowed) == n else None


def resolve_threads(threads: int | None) -> int:
    """The number of worker threads: `threads`, or torch's current intra-op setting."""
    if threads is None:
        return torch.get_num_threads()
    if threads < 1:
        raise ProbeConfigError(f"threads={threads}: give at least 1 (or None for torch's setting).")
    return threads


@contextmanager
def worker_pool(threads: int | None) -> Iterator[WorkerPool]:
    """A pool of `threads` workers (one intra-op thread each, pinned one per CPU where
    `worker_cpus` says so) for the duration of a fit."""
    n = resolve_threads(threads)
    cpus = worker_cpus(n)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    executor = None
    if n > 1:
        executor = ThreadPoolExecutor(
            n,
            thread_name_prefix="probes",
            initializer=_one_thread,
            initargs=(None if cpus is None else iter(cpus),),
        )
    try:
        yield WorkerPool(executor, n)
    finally:
        if executor is not None:
            executor.shutdown(wait=True)
        torch.set_num_threads(before)
