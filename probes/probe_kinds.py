"""The probe kinds of the grid trainer (`ProbeGrid.kind`) and their batched modules.

`fit_probes` builds a kind's probes with `make_probes`; `ProbeResults` runs stored probes
through their kind's own forward pass (`probe_type(kind).stored_logits`).
"""

from __future__ import annotations

from probes.batched_probes import BatchedProbes
from probes.errors import ProbeConfigError
from probes.grid import ProbeGrid, ProbeLayout
from probes.linear import LinearProbes
from probes.mlp import MLPProbes

# the closed-form mass-mean kinds (`probes.mass_mean_fit`) are stored as linear probes
PROBE_TYPES: dict[str, type[BatchedProbes]] = {
    "linear": LinearProbes,
    "mlp": MLPProbes,
    "mass_mean": LinearProbes,
    "mass_mean_iid": LinearProbes,
}


def probe_type(kind: str) -> type[BatchedProbes]:
    """The batched module of the probe kind `kind`."""
    if kind not in PROBE_TYPES:
        raise ProbeConfigError(f"probe kind {kind!r}: give one of {sorted(PROBE_TYPES)}.")
    return PROBE_TYPES[kind]


def make_probes(
    grid: ProbeGrid, layout: ProbeLayout, dim: int, outputs: int, seeds_outer: bool
) -> BatchedProbes:
    """The grid's probes (linear or MLP) in the training layout, freshly initialised."""
    if grid.kind == "mlp":
        return MLPProbes(layout, dim, outputs, grid.hidden, seeds_outer)
    return LinearProbes(layout, dim, outputs, seeds_outer)
