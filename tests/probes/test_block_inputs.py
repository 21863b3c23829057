"""A block's input buffer layout: rows gathered in place only for one seed in per-seed order
with features in the compute dtype."""

from __future__ import annotations

import pytest

from probes._grid.block_inputs import (
    ROWS_IN_PLACE,
    SEEDS_OUTER,
    SITES_OUTER,
    input_layout,
    input_shape,
)


@pytest.mark.parametrize(
    ("seeds_outer", "covered", "same_dtype", "layout", "shape"),
    [
        (True, 1, True, ROWS_IN_PLACE, (1, 64, 13, 384)),  # one seed: gathered in place
        (True, 2, True, SEEDS_OUTER, (2, 13, 64, 384)),
        (True, 1, False, SEEDS_OUTER, (1, 13, 64, 384)),  # float16 features, float32 buffer
        (False, 1, True, SITES_OUTER, (1, 13, 64, 384)),
    ],
)
def test_input_buffer_layout(seeds_outer, covered, same_dtype, layout, shape):
    assert input_layout(seeds_outer, covered, same_dtype) == layout
    assert input_shape(layout, covered, 13, 64, 384) == shape
