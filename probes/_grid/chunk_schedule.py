"""One epoch of the grid trainer as tasks with dependencies, taken by the worker threads.

Two kinds of task: `Draw(mask, seed, chunk)` draws a (mask, seed)'s dropout keep masks for a
chunk of steps into ring slot `chunk % ring`; `Train(block, chunk)` runs a chunk of a block's
steps, reading the slots of its mask's seeds. A block's chunks run in order, one at a time, and
so do a (mask, seed)'s draws (its generator is one sequence); a chunk trains once every seed's
draw for it is done, and a draw reuses a slot once every block of its mask has trained the chunk
that used it `ring` chunks before.

Nothing else orders the work: a worker that finishes takes whatever is ready (draws first, then
the chunk furthest behind), so a worker slowed by another process on its core holds up nothing
but the block in its hands; the others go on with the rest, up to `ring - 1` chunks ahead. The
numbers do not depend on the order (every task reads and writes its own tensors), only the time.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Draw:
    """Draw the keep masks of (mask, seed) for chunk `chunk`."""

    mask: int
    seed: int
    chunk: int


@dataclass(frozen=True)
class Train:
    """Run chunk `chunk` of block `block` (an index into the grid's blocks)."""

    block: int
    chunk: int


Task = Draw | Train


class ChunkSchedule:
    """The tasks of one epoch and who may run next; shared by the workers (thread-safe)."""

    def __init__(
        self,
        block_masks: list[int],
        chunks: list[int],
        n_seeds: int,
        ring: int,
        first: list[int] | None = None,
    ) -> None:
        """`block_masks[b]`: the mask of block b; `chunks[m]`: chunks of mask m this epoch, or
        the chunk where this part of the epoch stops; `first[m]`: the chunk it starts at (0;
        an epoch in parts, as with streamed features, continues at the chunk the last part
        stopped at)."""
        if ring < 2:
            raise ValueError(f"ring={ring}: a draw needs a slot apart from the chunk training")
        first = [0] * len(chunks) if first is None else first
        self.block_masks, self.chunks, self.ring = block_masks, chunks, ring
        self.drawn = [[f] * n_seeds for f in first]  # chunks drawn per (mask, seed)
        self.trained = [first[m] for m in block_masks]  # chunks trained per block
        self.drawing = [[False] * n_seeds for _ in chunks]
        self.training = [False] * len(block_masks)
        self.blocks_of = [
            [b for b, m in enumerate(block_masks) if m == mask] for mask in range(len(chunks))
        ]
        todo = [c - f for c, f in zip(chunks, first)]
        self.left = sum(todo[m] for m in block_masks) + n_seeds * sum(todo)
        self.error: BaseException | None = None
        self._cond = threading.Condition()

    def take(self, wait: bool = True) -> Task | None:
        """The next task to run, waiting until one is ready (`wait=False`: None at once when
        none is); None once the epoch is done or a task failed."""
        with self._cond:
            while True:
                if self.error is not None or self.left == 0:
                    return None
                task = self._ready()
                if task is not None:
                    self._mark(task, True)
                    return task
                if not wait:
                    return None
                self._cond.wait()

    def done(self, task: Task) -> None:
        """Record a finished task and wake the workers waiting for it."""
        with self._cond:
            self._mark(task, False)
            if isinstance(task, Draw):
                self.drawn[task.mask][task.seed] += 1
            else:
                self.trained[task.block] += 1
            self.left -= 1
            self._cond.notify_all()

    def fail(self, error: BaseException) -> None:
        """Stop handing out tasks (a task raised, or the caller was interrupted)."""
        with self._cond:
            if self.error is None:
                self.error = error
            self._cond.notify_all()

    def _mark(self, task: Task, busy: bool) -> None:
        if isinstance(task, Draw):
            self.drawing[task.mask][task.seed] = busy
        else:
            self.training[task.block] = busy

    def _ready(self) -> Task | None:
        """A ready draw of the earliest chunk, else the ready block chunk furthest behind."""
        best: Task | None = None
        for m, per_seed in enumerate(self.drawn):
            for s, c in enumerate(per_seed):
                if self.drawing[m][s] or c >= self.chunks[m]:
                    continue
                free = all(self.trained[b] > c - self.ring for b in self.blocks_of[m])
                if free and (best is None or c < best.chunk):
                    best = Draw(m, s, c)
        if best is not None:
            return best
        for b, c in enumerate(self.trained):
            m = self.block_masks[b]
            if self.training[b] or c >= self.chunks[m]:
                continue
            if all(d > c for d in self.drawn[m]) and (best is None or c < best.chunk):
                best = Train(b, c)
        return best
