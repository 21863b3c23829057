"""The grid trainer's task schedule: every task once, in an order that respects what each task
reads and writes, whatever order the workers finish in; a failure stops every worker."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probes._grid.chunk_schedule import ChunkSchedule, Draw, Train
from probes._grid.workers import worker_pool


@settings(max_examples=200, deadline=None)
@given(
    masks=st.lists(st.integers(1, 5), min_size=1, max_size=3),  # chunks per mask
    groups=st.integers(1, 3),  # blocks per mask
    n_seeds=st.integers(1, 3),
    ring=st.integers(2, 4),
    workers=st.integers(1, 4),
    picks=st.lists(st.integers(0, 10**6), min_size=400, max_size=400),
)
def test_any_finishing_order_respects_the_dependencies(
    masks, groups, n_seeds, ring, workers, picks
):
    block_masks = [m for m in range(len(masks)) for _ in range(groups)]
    schedule = ChunkSchedule(block_masks, masks, n_seeds, ring)
    drawn = {(m, s): 0 for m in range(len(masks)) for s in range(n_seeds)}
    trained = [0] * len(block_masks)
    running: list = []
    picks_left = iter(picks)
    while True:
        task = schedule.take(wait=False) if len(running) < workers else None
        if task is not None:
            if isinstance(task, Draw):
                m, c = task.mask, task.chunk
                assert c == drawn[(m, task.seed)]  # a generator's draws in order
                assert all(trained[b] > c - ring for b, bm in enumerate(block_masks) if bm == m)
            else:
                m, c = block_masks[task.block], task.chunk
                assert c == trained[task.block]  # a block's chunks in order
                assert all(drawn[(m, s)] > c for s in range(n_seeds))  # its masks are drawn
            assert all(t != task for t in running)
            running.append(task)
            continue
        if not running:
            break  # nothing ready and nothing running: the epoch must be complete
        done = running.pop(next(picks_left, 0) % len(running))
        if isinstance(done, Draw):
            drawn[(done.mask, done.seed)] += 1
        else:
            trained[done.block] += 1
        schedule.done(done)
    assert all(drawn[(m, s)] == masks[m] for m, s in drawn)
    assert trained == [masks[m] for m in block_masks]
    assert schedule.take() is None


def test_a_failing_task_stops_every_worker_and_is_raised() -> None:
    schedule = ChunkSchedule([0, 0, 0], [50], 2, 2)
    ran: list = []
    lock = threading.Lock()

    def run(task) -> None:
        with lock:
            ran.append(task)
        if task == Train(1, 3):
            raise RuntimeError("boom")

    with worker_pool(3) as pool, pytest.raises(RuntimeError, match="boom"):
        pool.drain(schedule, run, width=3)
    assert Train(1, 3) in ran
    assert len(ran) < 3 * 50 + 2 * 50  # stopped early
    assert schedule.take() is None


def test_every_task_runs_once_on_the_pool() -> None:
    schedule = ChunkSchedule([0, 1, 1], [4, 7], 3, 3)
    ran: list = []
    lock = threading.Lock()

    def run(task) -> None:
        with lock:
            ran.append(task)

    with worker_pool(2) as pool:
        pool.drain(schedule, run, width=3)
    expected = {Draw(m, s, c) for m, n in enumerate([4, 7]) for s in range(3) for c in range(n)}
    expected |= {Train(b, c) for b, m in enumerate([0, 1, 1]) for c in range([4, 7][m])}
    assert sorted(map(repr, ran)) == sorted(map(repr, expected))
