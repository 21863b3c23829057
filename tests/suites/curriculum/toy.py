"""A toy NLI task with pair features: three labels of unequal counts (so N per label caps a
label), premise and hypothesis vectors carrying the label more strongly at later sites."""

from __future__ import annotations

import torch

from internals import Site
from suites.curriculum import NLIFeatures
from suites.tasks import Task, make_frame

NAMES = ("entailment", "neutral", "contradiction")


def toy_task(n_sites: int = 2) -> tuple[Task, NLIFeatures]:
    """170 items (every fifth in test), features `[item, site, 6]` at `n_sites` encoder sites."""
    gen = torch.Generator().manual_seed(0)
    labels = torch.cat([torch.full((n,), c) for c, n in enumerate((70, 60, 40))])
    labels = labels[torch.randperm(labels.numel(), generator=gen)]
    n = labels.numel()
    rows = [
        {
            "text": f"p{i}",
            "text_pair": f"h{i}",
            "label": NAMES[int(y)],
            "split": "test" if i % 5 == 0 else "train",
        }
        for i, y in enumerate(labels)
    ]
    task = Task("toy", make_frame(rows, "classification"), labels=NAMES, phenomenon="toy")
    strength = torch.linspace(0.5, 2.0, n_sites)
    signal = torch.nn.functional.one_hot(labels, 6).float()[:, None] * strength[None, :, None]
    premise = torch.randn(n, n_sites, 6, generator=gen) + signal
    hypothesis = torch.randn(n, n_sites, 6, generator=gen) + 0.5 * signal
    sites = tuple(Site("encoder", 3 * (s + 1)) for s in range(n_sites))
    return task, NLIFeatures(premise, hypothesis, sites)
