"""A memory budget for the features a fit holds, and how a `FeatureSet`'s sites are cut to fit.

`TrainConfig(memory="4GiB")` and `fit_logistic_regression(memory=...)` take a number of bytes
(an integer) or a size with a unit: `B`, `KB`/`MB`/`GB`/`TB` (powers of 1000) or
`KiB`/`MiB`/`GiB`/`TiB` (powers of 1024), e.g. `"4GiB"`, `"1.5 GB"`. The budget counts the
float32 features read from disk (what the trainers compute on), not the probes' own state.

A fit reads its sites in groups: as many sites as fit the budget at once, all sites in one
group when they fit; with several groups, the next group is read while one trains, so two
groups together must fit. Where a single site does not fit, the fit streams item blocks
instead (see `probes.streamed_sweep`).

For a CUDA device the groups are read through pinned host memory onto the device and held there
(`probes._grid.host_buffers`): the budget then bounds the device memory the features take, and
the host holds only the blocks on their way.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from probes.errors import ProbeConfigError

UNITS = {
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)\s*$", re.IGNORECASE)
MEMORY_NEED = (
    "None (no bound), a number of bytes >= 1, or a size such as '4GiB' (units B, KB, MB, GB,"
    " TB, KiB, MiB, GiB, TiB)"
)


def memory_bytes(value: int | str | None) -> int | None:
    """The budget in bytes (None: no budget); `ValueError` for a value that is not one."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, int):
        if value < 1:
            raise ValueError(value)
        return value
    match = SIZE.match(value)
    if match is None or match.group(2).lower() not in UNITS | {"": 1}:
        raise ValueError(value)
    number = float(match.group(1)) * UNITS.get(match.group(2).lower(), 1)
    if number < 1:
        raise ValueError(value)
    return int(number)


def is_memory(value: object) -> bool:
    """Whether `value` is a valid budget (the `Rule` of `TrainConfig.memory`)."""
    try:
        memory_bytes(value)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        return False
    return True


def checked_memory(value: int | str | None, owner: str) -> int | None:
    """`memory_bytes(value)`, or `ProbeConfigError` naming `owner` (e.g. `memory`)."""
    if not is_memory(value):
        raise ProbeConfigError(f"{owner}={value!r}: needs {MEMORY_NEED}; e.g. memory='4GiB'")
    return memory_bytes(value)


@dataclass(frozen=True)
class SitePlan:
    """How a fit reads its sites: `groups` of positions (into the fit's sites), each trained to
    the end before the next; `prefetch`: read the next group while one trains; `streamed`:
    not even one site fits, so item blocks are streamed instead (one group of every site)."""

    groups: tuple[tuple[int, ...], ...]
    prefetch: bool
    streamed: bool


def plan_sites(n_sites: int, site_bytes: int, budget: int | None) -> SitePlan:
    """Groups of consecutive sites that fit `budget` (bytes; None: one group of all), with room
    for the next group to be read while one trains."""
    every = tuple(range(n_sites))
    if budget is None or n_sites * site_bytes <= budget:
        return SitePlan((every,), False, False)
    if site_bytes > budget:
        return SitePlan((every,), False, True)
    per_group = budget // (2 * site_bytes)
    prefetch = per_group >= 1
    per_group = max(1, per_group)
    groups = tuple(every[a : a + per_group] for a in range(0, n_sites, per_group))
    return SitePlan(groups, prefetch, False)


def log_site_groups(
    log: logging.Logger, trainer: str, plan: SitePlan, site_bytes: int, budget: int | None
) -> None:
    """Say in the log how `trainer` reads its sites, where it reads them in several groups."""
    if len(plan.groups) > 1:
        log.info(
            "%s: %d sites of %s each in %d groups of up to %d under memory=%s%s",
            trainer,
            sum(len(group) for group in plan.groups),
            format_bytes(site_bytes),
            len(plan.groups),
            len(plan.groups[0]),
            format_bytes(budget or 0),
            ", the next group read while one trains" if plan.prefetch else "",
        )


def format_bytes(n: int) -> str:
    """`n` bytes in GiB, MiB or KiB, for messages."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} B"
