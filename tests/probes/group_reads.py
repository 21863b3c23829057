"""Recording the site groups a FeatureSet fit reads, and how many it still holds meanwhile."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from torch import Tensor

from probes._grid.host_buffers import Arrival
from probes._grid.site_reader import item_major_reader


def record_group_reads(
    monkeypatch: pytest.MonkeyPatch, module: ModuleType
) -> list[tuple[int, int]]:
    """`(sites read, groups still held)` as each group's read begins, for the fits in `module`
    (which imports `item_major_reader`): a group still held is one whose tensor is alive."""
    reads: list[tuple[int, int]] = []
    groups: list[weakref.ref[Tensor]] = []

    def counting_reader(*args: Any) -> Callable[[tuple[int, ...]], Arrival]:
        read = item_major_reader(*args)

        def counted(group: tuple[int, ...]) -> Arrival:
            reads.append((len(group), sum(ref() is not None for ref in groups)))
            out = read(group)
            groups.append(weakref.ref(out.tensor))
            return out

        return counted

    monkeypatch.setattr(module, "item_major_reader", counting_reader)
    return reads
