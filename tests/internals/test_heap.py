"""`lingprobe.heap`: the C heap settings a long extraction uses, on glibc."""

from __future__ import annotations

import threading

import pytest

from internals import SpanItem, load_subject
from lingprobe import heap


class RecordingLibc:
    """Stands in for glibc, recording `mallopt` and `malloc_trim` calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def mallopt(self, parameter: int, value: int) -> int:
        self.calls.append(("mallopt", parameter, value))
        return 1

    def malloc_trim(self, pad: int) -> int:
        self.calls.append(("malloc_trim", pad, 0))
        return 1


@pytest.fixture
def libc(monkeypatch):
    fake = RecordingLibc()
    monkeypatch.setattr(heap, "_LIBC", fake)
    return fake


def test_mapped_allocations_sets_the_threshold_once_and_restores_it_after_the_last(libc):
    with heap.mapped_allocations():
        with heap.mapped_allocations():  # nested (a second extraction): no new setting
            pass
        assert libc.calls == [("mallopt", heap.M_MMAP_THRESHOLD, heap.MAPPED_FROM)]
    assert libc.calls[-1] == ("mallopt", heap.M_MMAP_THRESHOLD, heap.DYNAMIC_MAX)
    assert len(libc.calls) == 2


def test_mapped_allocations_restores_the_threshold_after_an_error(libc):
    with pytest.raises(KeyboardInterrupt), heap.mapped_allocations(1 << 22):
        raise KeyboardInterrupt
    assert libc.calls == [
        ("mallopt", heap.M_MMAP_THRESHOLD, 1 << 22),
        ("mallopt", heap.M_MMAP_THRESHOLD, heap.DYNAMIC_MAX),
    ]


def test_concurrent_extractions_share_one_setting(libc):
    inside, leave = threading.Barrier(3), threading.Event()

    def extraction() -> None:
        with heap.mapped_allocations():
            inside.wait()
            leave.wait()

    workers = [threading.Thread(target=extraction) for _ in range(2)]
    for worker in workers:
        worker.start()
    inside.wait()  # both inside: set once
    assert libc.calls == [("mallopt", heap.M_MMAP_THRESHOLD, heap.MAPPED_FROM)]
    leave.set()
    for worker in workers:
        worker.join()
    assert libc.calls[1:] == [("mallopt", heap.M_MMAP_THRESHOLD, heap.DYNAMIC_MAX)]


def test_without_glibc_nothing_is_called(monkeypatch):
    monkeypatch.setattr(heap, "_LIBC", None)
    with heap.mapped_allocations():
        heap.release_memory(young_only=True)


def test_store_extraction_runs_inside_mapped_allocations(tmp_path, libc):
    glove = load_subject("glove:6B.50d")
    glove.features([SpanItem("the cat"), SpanItem("a dog")], store=tmp_path, progress=False)
    settings = [value for name, _, value in libc.calls if name == "mallopt"]
    assert settings == [heap.MAPPED_FROM, heap.DYNAMIC_MAX]
    assert ("malloc_trim", 0, 0) in libc.calls  # each window's freed memory handed back
