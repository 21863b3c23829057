"""How the grid trainer cuts its work into blocks: one mask and a range of (site, seed) units.

A unit is one (site, seed) pair, numbered `site * n_seeds + seed`, so a range of units is a
contiguous slice of every training-layout tensor flattened over `[site, seed]`
(`BatchedProbes.units`). A block's probes are trained together: one batched matmul per step.
"""

from __future__ import annotations

import itertools
import math

# (mask, units): one block of training work, the (site, seed) pairs `site * seeds + seed` in a range
Block = tuple[int, slice]
SITE_GROUP_MAX = 8  # sites per block at most (its input buffer stays a few MB; not results)


def unit_groups(n_sites: int, n_seeds: int, workers: int) -> list[slice]:
    """Training blocks as ranges of (site, seed) units: the units cut into near-equal contiguous
    ranges, as many as the workers (or a multiple of them once a range would cover more than
    `SITE_GROUP_MAX` sites). Every worker gets the same work whatever the number of sites
    (7 sites x 3 seeds on 2 workers: 11 + 10 units, where groups of whole sites gave 4 + 3 and
    one worker idle a seventh of the time). A block gathers the rows of every seed at the sites
    it covers, so a site split between two blocks is gathered twice: there are never more
    blocks than sites (one site: one block, which the workers' intra-op threads share). A
    probe's numbers do not depend on its block."""
    units = n_sites * n_seeds
    n_groups = min(n_sites, workers * math.ceil(n_sites / (workers * SITE_GROUP_MAX)))
    bounds = [round(g * units / n_groups) for g in range(n_groups + 1)]
    return [slice(a, b) for a, b in itertools.pairwise(bounds)]


def covered_sites(units: slice, n_seeds: int) -> slice:
    """The sites whose units fall in `units` (the first and last may be covered in part)."""
    return slice(units.start // n_seeds, -(-units.stop // n_seeds))


def covered_width(units: slice, n_seeds: int) -> int:
    """How many sites `units` covers (in whole or in part)."""
    sites = covered_sites(units, n_seeds)
    return sites.stop - sites.start
