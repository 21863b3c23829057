"""Running batches with out-of-memory back-off: a long extraction never dies of one large batch.

On `torch.OutOfMemoryError` the batch is halved and both halves retried, and every later batch is
kept within the padded tokens of the larger half (a log line says so). Only a single row that
does not fit alone is an error. The CUDA path needs a GPU and is not exercised here; the tests
inject the error with a fake that raises it on the first call.
"""

from __future__ import annotations

import gc
import logging
from collections import deque
from collections.abc import Callable, Sequence

import numpy as np
import torch

from internals.batching import padded_tokens
from internals.errors import ExtractionMemoryError

log = logging.getLogger(__name__)


def run_batches(
    batches: Sequence[np.ndarray], lengths: Sequence[int], run: Callable[[np.ndarray], None]
) -> int | None:
    """Call `run(batch)` for every batch, backing off on out-of-memory errors.

    `run` must keep nothing from a batch that raised. Returns the padded-token limit learned from
    out-of-memory errors (None when there was none).
    """
    queue = deque(batches)
    limit: int | None = None
    while queue:
        batch = queue.popleft()
        size = padded_tokens(lengths, batch)
        if limit is not None and size > limit and len(batch) > 1:
            queue.extendleft(reversed(np.array_split(batch, 2)))
            continue
        try:
            run(batch)
        except torch.OutOfMemoryError as error:
            _release_memory()
            if len(batch) == 1:
                raise ExtractionMemoryError(
                    f"one row of {size} tokens does not fit in memory even alone; load the model"
                    " with device_map='auto' (and offload_folder=...), a lower dtype, or"
                    " quantised, or lower the model's maximum length"
                ) from error
            halves = np.array_split(batch, 2)
            limit = padded_tokens(lengths, halves[0])  # the larger half, with the longest rows
            log.warning(
                "out of memory on a batch of %d rows (%d padded tokens): halving it and keeping"
                " batches under %d padded tokens from now on",
                len(batch),
                size,
                limit,
            )
            queue.extendleft(reversed(halves))
    return limit


def _release_memory() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
