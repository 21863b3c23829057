"""`ItemRows`: pooled pieces written batch by batch land where a plain gather puts them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from internals.item_rows import ItemRows
from internals.text_rows import Pieces, RowPlan


def plan_of(segment: np.ndarray) -> RowPlan:
    ones = np.ones(len(segment), dtype=np.int64)
    pieces = Pieces(segment, 0 * ones, ones)
    return RowPlan([], np.zeros(0, dtype=np.int64), pieces, int(segment.max()) + 1, [], 0)


@pytest.mark.parametrize("width", [1, 2, 3])
@pytest.mark.parametrize("in_order", [True, False])
def test_batches_in_any_order_equal_a_gather_of_the_rows(width, in_order):
    gen = np.random.default_rng(width)
    n_segments, n_items, n_sites, dim = 11, 9, 3, 4
    rows = gen.integers(0, n_segments, size=n_items * width)  # duplicates included
    rows[:n_segments] = np.arange(n_segments)[: len(rows[:n_segments])]
    n_segments = int(rows.max()) + 1
    segment = np.arange(n_segments) if in_order else gen.permutation(n_segments)
    pooled = torch.randn(n_segments, n_sites, dim, generator=torch.Generator().manual_seed(0))
    sink = ItemRows(plan_of(segment), rows, n_items, n_sites, dim, "mean")
    assert sink.direct == in_order
    order = gen.permutation(n_segments)  # pieces arrive in batches of any order
    for batch in np.array_split(order, 4):
        # piece p holds segment[p]'s rows
        sink.write(batch, pooled[segment[batch]])
    expected = (
        pooled[torch.from_numpy(rows)]
        .view(n_items, width, n_sites, dim)
        .transpose(1, 2)
        .reshape(n_items, n_sites, width * dim)
    )
    torch.testing.assert_close(sink.result(), expected, rtol=0, atol=0)
