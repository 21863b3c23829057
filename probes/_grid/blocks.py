"""How the grid trainer cuts its work into blocks: one mask and a range of (site, seed) units.

A unit is one (site, seed) pair. Units are numbered along an outer and an inner axis,
`outer * n_inner + inner`: sites outer in shared order (a block covers a range of sites, all
seeds, and gathers the shared batch rows once at those sites), seeds outer in per-seed order (a
block covers a range of seeds, all sites, and gathers each seed's batch rows over every site:
one contiguous run of an item's features instead of one row per site). A range of units is a
contiguous slice of every training-layout tensor flattened over its `[outer, inner]` axes
(`BatchedProbes.units`). A block's probes are trained together: one batched matmul per step.
"""

from __future__ import annotations

import itertools
import math

# (mask, units): one block of training work, the units `outer * n_inner + inner` in a range
Block = tuple[int, slice]
OUTER_GROUP_MAX = 8  # outer positions per block at most (its input buffer stays a few MB)
# bytes of a block's parameters, gradients and AdamW moments at most on the CPU (not results):
# measured on 2-core Zen 4, 10 epochs, per-seed order: 13 sites x 5 seeds of UPOS-sized probes
# (209 KB per unit) in 2 / 3 / 4 blocks 7.8-8.7 / 7.1-7.2 / 7.2-7.5 s; 7 x 3 probes of 40
# classes (493 KB per unit) in 2 / 3 / 4 blocks 4.6-5.3 / 4.3-4.5 / 4.5-5.0 s
BLOCK_STATE_MAX = 4 * 2**20
BLOCK_STATE_OVER = 1.25  # cut between outer positions, a block may pass the cap by this factor


def unit_groups(n_outer: int, n_inner: int, workers: int, unit_bytes: int = 0) -> list[slice]:
    """Training blocks as ranges of units: as many as the workers (or a multiple of them once a
    range would cover more than `OUTER_GROUP_MAX` outer positions), or more where a block's
    state (`unit_bytes` per unit: parameters, gradients, AdamW moments) would pass
    `BLOCK_STATE_MAX`, so that a step's working set stays near the cache (0: no such limit, as
    on a GPU, where one large block is best). Cut between outer positions, no block passes the
    cap by more than `BLOCK_STATE_OVER` where one position fits: 5 seeds x 13 sites of
    UPOS-sized probes (2.7 MB per seed) train in 5 blocks of one seed 6 % faster than in 4
    (13, 13, 26 and 13 units; best of 3 alternating, 2 workers), while 7 sites x 3 seeds of
    40 classes (1.5 MB per site) keep 3 blocks of 2, 3 and 2 sites, faster than 4.

    With one block per worker the units are cut into near-equal ranges, so every worker gets the
    same work whatever the shape (7 sites x 3 seeds on 2 workers: 11 + 10 units, where groups
    of whole sites gave 4 + 3 and one worker idle a seventh of the time). With more blocks than
    workers the workers share them out chunk by chunk, and the cuts fall between outer
    positions (near-equal numbers of whole ones): a block gathers and drops out the rows of
    every outer position it covers, so one split between two blocks costs that work twice (13
    sites x 5 seeds of UPOS-sized probes on 2 workers, shared order: 3, 3, 4 and 3 sites
    trained 3 % faster than 16, 16, 17 and 16 units, which covered 4 sites each). There are
    never more blocks than outer positions (one: one block, which the workers' intra-op threads
    share). A probe's numbers do not depend on its block."""
    units = n_outer * n_inner
    by_outer = workers * math.ceil(n_outer / (workers * OUTER_GROUP_MAX))
    by_state = math.ceil(units * unit_bytes / BLOCK_STATE_MAX)
    if by_state > workers:  # cut between outer positions: at most BLOCK_STATE_OVER the cap
        per_block = max(1, int(BLOCK_STATE_OVER * BLOCK_STATE_MAX) // (n_inner * unit_bytes))
        by_state = max(by_state, math.ceil(n_outer / per_block))
    n_groups = min(n_outer, max(by_outer, by_state))
    if n_groups > workers:
        bounds = [round(g * n_outer / n_groups) * n_inner for g in range(n_groups + 1)]
    else:
        bounds = [round(g * units / n_groups) for g in range(n_groups + 1)]
    return [slice(a, b) for a, b in itertools.pairwise(bounds)]


def covered_outer(units: slice, n_inner: int) -> slice:
    """The outer positions whose units fall in `units` (the first and last may be covered in
    part)."""
    return slice(units.start // n_inner, -(-units.stop // n_inner))


def covered_width(units: slice, n_inner: int) -> int:
    """How many outer positions `units` covers (in whole or in part)."""
    outer = covered_outer(units, n_inner)
    return outer.stop - outer.start
