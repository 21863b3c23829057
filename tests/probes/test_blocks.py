"""How the grid trainer cuts (site, seed) units into blocks (sites outer here; seeds outer is
the same cut with the axes' roles swapped)."""

from __future__ import annotations

from itertools import pairwise

import pytest

from probes._grid.blocks import BLOCK_STATE_MAX, covered_outer, unit_groups


@pytest.mark.parametrize(
    ("sites", "seeds", "workers", "unit_bytes", "expected"),
    [
        (7, 3, 2, 0, [10, 11]),  # as many blocks as workers
        (13, 5, 2, 0, [32, 33]),
        (13, 5, 2, 209_440, [15, 15, 20, 15]),  # UPOS-sized state: 4 blocks of whole sites
        (7, 3, 2, 492_800, [6, 9, 6]),  # 40 classes: 3 blocks of 2, 3 and 2 sites
        (13, 5, 3, 0, [22, 21, 22]),  # as many blocks as workers: near-equal units
        (13, 5, 1, 209_440, [15, 15, 20, 15]),
        (2, 5, 2, 10**9, [5, 5]),  # never more blocks than sites
        (1, 4, 2, 0, [4]),
        (20, 1, 2, 0, [5, 5, 5, 5]),  # over OUTER_GROUP_MAX sites per block: a multiple of workers
        (5, 13, 2, 209_440, [13] * 5),  # seeds outer: 2.7 MB per seed, one seed per block
        (3, 7, 2, 492_800, [7, 7, 7]),
    ],
)
def test_blocks_cover_every_unit_once_in_near_equal_ranges(
    sites, seeds, workers, unit_bytes, expected
):
    groups = unit_groups(sites, seeds, workers, unit_bytes)
    assert [g.stop - g.start for g in groups] == expected
    assert groups[0].start == 0 and groups[-1].stop == sites * seeds
    assert all(a.stop == b.start for a, b in pairwise(groups))


def test_a_block_state_stays_near_the_cap_where_an_outer_position_fits():
    unit_bytes = 300_000
    shapes = ((13, 5), (30, 5), (5, 13), (4, 9))
    for groups in (unit_groups(outer, inner, 2, unit_bytes) for outer, inner in shapes):
        assert max(g.stop - g.start for g in groups) * unit_bytes <= BLOCK_STATE_MAX * 1.25


def test_more_blocks_than_workers_cut_between_sites():
    for sites, seeds, workers, unit_bytes in ((13, 5, 2, 209_440), (30, 5, 2, 300_000)):
        groups = unit_groups(sites, seeds, workers, unit_bytes)
        assert len(groups) > workers
        assert all(g.start % seeds == 0 and g.stop % seeds == 0 for g in groups)
        widths = [(g.stop - g.start) // seeds for g in groups]
        assert max(widths) - min(widths) <= 1


def test_covered_outer_of_a_range_that_splits_a_site():
    assert covered_outer(slice(30, 65), 5) == slice(6, 13)
    assert covered_outer(slice(0, 32), 5) == slice(0, 7)
