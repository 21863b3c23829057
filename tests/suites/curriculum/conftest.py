"""Fixtures of the curriculum tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch


@pytest.fixture()
def one_thread() -> Iterator[None]:
    """One intra-op thread: the toy tensors' fastest, and immune to a busy machine's stalls
    (modules on toy features use it: `pytestmark = pytest.mark.usefixtures("one_thread")`)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
