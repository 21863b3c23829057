"""Control tasks (Hewitt & Liang 2019): labels a probe can only learn by memorising types."""

from __future__ import annotations

import torch
from jaxtyping import Int, Shaped
from torch import Tensor

from probes._grid.inputs import Targets
from probes._grid.streams import keyed_generator
from probes.grid import ProbeLayout


def control_labels(
    targets: Shaped[Tensor, " item *label"],
    type_ids: Int[Tensor, " item"] | None = None,
    seed: int = 0,
) -> Shaped[Tensor, " item *label"]:
    """Control-task targets for `targets` (class ids, 0/1 rows, or floats).

    With `type_ids` (one id per word/span type, e.g. from its surface string), each type gets the
    label of one uniformly drawn item, i.e. a label drawn from the empirical label distribution,
    fixed across the type's occurrences. Without them the labels are shuffled over items.
    The draw depends only on `seed` and the data.
    """
    n = targets.shape[0]
    gen = keyed_generator("control", seed)
    if type_ids is None:
        return targets[torch.randperm(n, generator=gen)]
    n_types = int(type_ids.max()) + 1 if n else 0
    source = torch.randint(0, n, (n_types,), generator=gen)
    return targets[source[type_ids.cpu()].to(targets.device)]


def variant_targets(
    target: Targets, ids: Int[Tensor, " item"] | None, layout: ProbeLayout
) -> Shaped[Tensor, " seed variant item *label"]:
    """Targets of every (seed, variant): the task's, and each seed's control labels."""
    per_seed = []
    for seed in layout.seeds:
        variants = {"task": target.values}
        if "control" in layout.variants:
            variants["control"] = control_labels(target.values, ids, seed)
        per_seed.append(torch.stack([variants[v] for v in layout.variants]))
    return torch.stack(per_seed)
