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
# bytes of a block's parameters, gradients and AdamW moments at most on the CPU (not results):
# measured on 2-core Zen 4, 10 epochs, per-seed order: 13 sites x 5 seeds of UPOS-sized probes
# (209 KB per unit) in 2 / 3 / 4 blocks 7.8-8.7 / 7.1-7.2 / 7.2-7.5 s; 7 x 3 probes of 40
# classes (493 KB per unit) in 2 / 3 / 4 blocks 4.6-5.3 / 4.3-4.5 / 4.5-5.0 s
BLOCK_STATE_MAX = 4 * 2**20


def unit_groups(n_sites: int, n_seeds: int, workers: int, unit_bytes: int = 0) -> list[slice]:
    """Training blocks as ranges of (site, seed) units: as many as the workers (or a multiple
    of them once a range would cover more than `SITE_GROUP_MAX` sites), or more where a block's
    state (`unit_bytes` per unit: parameters, gradients, AdamW moments) would pass
    `BLOCK_STATE_MAX`, so that a step's working set stays near the cache (0: no such limit, as
    on a GPU, where one large block is best).

    With one block per worker the units are cut into near-equal ranges, so every worker gets the
    same work whatever the number of sites (7 sites x 3 seeds on 2 workers: 11 + 10 units, where
    groups of whole sites gave 4 + 3 and one worker idle a seventh of the time). With more
    blocks than workers the workers share them out chunk by chunk, and the cuts fall between
    sites (near-equal numbers of whole sites): a block gathers and drops out the rows of every
    seed at each site it covers, so a site split between two blocks costs that work twice
    (13 sites x 5 seeds of UPOS-sized probes on 2 workers, per-seed order: 3, 3, 4 and 3 sites
    trained 3 % faster than 16, 16, 17 and 16 units, which covered 4 sites each). There are
    never more blocks than sites (one site: one block, which the workers' intra-op threads
    share). A probe's numbers do not depend on its block."""
    units = n_sites * n_seeds
    by_sites = workers * math.ceil(n_sites / (workers * SITE_GROUP_MAX))
    by_state = math.ceil(units * unit_bytes / BLOCK_STATE_MAX)
    n_groups = min(n_sites, max(by_sites, by_state))
    if n_groups > workers:
        bounds = [round(g * n_sites / n_groups) * n_seeds for g in range(n_groups + 1)]
    else:
        bounds = [round(g * units / n_groups) for g in range(n_groups + 1)]
    return [slice(a, b) for a, b in itertools.pairwise(bounds)]


def covered_sites(units: slice, n_seeds: int) -> slice:
    """The sites whose units fall in `units` (the first and last may be covered in part)."""
    return slice(units.start // n_seeds, -(-units.stop // n_seeds))


def covered_width(units: slice, n_seeds: int) -> int:
    """How many sites `units` covers (in whole or in part)."""
    sites = covered_sites(units, n_seeds)
    return sites.stop - sites.start
