"""Synthetic features with known structure for the probes tests."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import torch
from torch import Tensor


@pytest.fixture(autouse=True)
def one_thread() -> Iterator[None]:
    """Tiny tensors: one intra-op thread is fastest, and immune to a busy machine's stalls."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@dataclass
class Synthetic:
    """Features `[item, site, dim]` whose class signal grows with the site, plus word types."""

    feats: Tensor
    labels: Tensor
    keys: Tensor
    num_classes: int


def make_synthetic(
    n: int = 240, sites: int = 3, dim: int = 8, classes: int = 4, types: int = 40, seed: int = 0
) -> Synthetic:
    """Each item is an occurrence of a word type; a type has one label; site s carries the
    class mean with strength s (site 0: no signal)."""
    gen = torch.Generator().manual_seed(seed)
    keys = torch.randint(0, types, (n,), generator=gen)
    type_label = torch.randint(0, classes, (types,), generator=gen)
    labels = type_label[keys]
    means = torch.randn(classes, dim, generator=gen) * 2
    strength = torch.arange(sites, dtype=torch.float32)[None, :, None]
    feats = torch.randn(n, sites, dim, generator=gen) + strength * means[labels][:, None, :]
    return Synthetic(feats, labels, keys, classes)


@pytest.fixture
def synthetic() -> Synthetic:
    return make_synthetic()
