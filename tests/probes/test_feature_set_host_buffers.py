"""Host buffers for a fit's device: pinned only for a CUDA device. Every FeatureSet fit on the
CPU asks for no pinned memory; for CUDA the blocks are read into pinned buffers, copied on a side
stream, and the trainer's stream waits for that stream's event when it takes the group. This
machine has no GPU: the CUDA calls are stand-ins that record what is asked of them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from torch import Tensor

from lingprobe.feature_set import FeatureSet
from probes import ProbeGrid, TrainConfig, fit_logistic_regression, fit_probes, random_splits
from probes._grid import host_buffers, site_reader
from probes._grid.host_buffers import Arrival, read_blocks, shard_blocks
from probes._grid.item_stream import ItemStream
from probes._grid.site_reader import item_major_reader, site_major_reader
from probes.structural import StructuralConfig, StructuralGrid, fit_structural_probes
from tests.probes.conftest import Synthetic, make_synthetic
from tests.probes.structural_data import embedded_trees

N, SITES, DIM = 160, 4, 6
SITE_BYTES = N * DIM * 4
CPU, CUDA, CUDA0 = torch.device("cpu"), torch.device("cuda"), torch.device("cuda", 0)


@pytest.fixture
def allocations(monkeypatch: pytest.MonkeyPatch) -> list[tuple[torch.device, bool]]:
    """`(device, pin_memory)` of every buffer the readers ask for; each is made on the CPU,
    unpinned (there is no GPU here)."""
    calls: list[tuple[torch.device, bool]] = []

    def recording(shape, dtype: torch.dtype, device: torch.device, pin_memory: bool) -> Tensor:
        calls.append((device, pin_memory))
        return torch.empty(tuple(shape), dtype=dtype)

    monkeypatch.setattr(host_buffers, "allocate", recording)
    return calls


@pytest.fixture(scope="module")
def data() -> Synthetic:
    return make_synthetic(n=N, sites=SITES, dim=DIM)


@pytest.fixture(scope="module")
def features(data: Synthetic, tmp_path_factory: pytest.TempPathFactory) -> FeatureSet:
    path = tmp_path_factory.mktemp("features") / "fs"
    names = [f"layer.{i}" for i in range(SITES)]
    return FeatureSet.write(path, [data.feats[:70], data.feats[70:]], names, shard_size=32)


@pytest.mark.parametrize(
    ("device", "pinned"),
    [("cuda", True), ("cuda:1", True), ("cpu", False), ("meta", False), ("mps", False)],
)
def test_only_host_buffers_bound_for_cuda_are_pinned(
    allocations: list[tuple[torch.device, bool]], device: str, pinned: bool
) -> None:
    assert host_buffers.pins(torch.device(device)) is pinned
    host_buffers.host_empty((2, 3), torch.float16, torch.device(device))
    assert allocations == [(CPU, pinned)]


def test_feature_set_fits_on_the_cpu_ask_for_no_pinned_memory(
    allocations: list[tuple[torch.device, bool]], data: Synthetic, features: FeatureSet
) -> None:
    splits = random_splits(N, seed=1)
    grid = ProbeGrid(seeds=[0], control=True)
    for budget, batch in ((2 * SITE_BYTES, 16), (SITE_BYTES * 9 // 10, 1)):  # groups; items
        config = TrainConfig(epochs=1, batch_size=batch, memory=budget)
        fit_probes(
            features, data.labels, splits, grid, config, keys=data.keys, progress=False,
            device="cpu",
        )  # fmt: skip
    y = torch.stack([data.labels] * SITES)
    fit_logistic_regression(features, y, memory=2 * SITE_BYTES)
    trees = embedded_trees(12, seed=2, noise=0.3)
    folder = Path(features.folder).parent / "trees"
    words = FeatureSet.write(folder, [trees.feats], ["a", "b"], shard_size=16, overwrite=True)
    one_site = words.shape[0] * words.shape[2] * 4
    structural = StructuralConfig(epochs=1, batch_size=4, memory=one_site)
    fit_structural_probes(words, trees.trees, trees.splits, "depth", StructuralGrid(), structural)
    assert len(allocations) > 4
    assert set(allocations) == {(CPU, False)}


def test_cpu_readers_give_the_stored_values_in_one_host_tensor(
    allocations: list[tuple[torch.device, bool]], features: FeatureSet, data: Synthetic
) -> None:
    x = item_major_reader(features, [3, 1, 2])((0, 2)).take()
    assert torch.equal(x, data.feats[:, [3, 2]].float())
    assert allocations == [(CPU, False)]  # no buffer but the result
    X = site_major_reader(features, range(SITES))((1, 3)).take()
    assert torch.equal(X, data.feats[:, [1, 3]].float().transpose(0, 1))


class FakeStream:
    """Stands in for `torch.cuda.Stream` (whose CUDA build needs a GPU to make one)."""

    def __init__(self, device: torch.device | None = None) -> None:
        self.at, self.waited = device, []

    def wait_event(self, event: FakeEvent) -> None:
        self.waited.append(event)


class FakeEvent:
    """Stands in for `torch.cuda.Event`."""

    def __init__(self) -> None:
        self.on: FakeStream | None = None

    def record(self, stream: FakeStream | None = None) -> None:
        self.on = stream


@dataclass
class FakeCuda:
    """What the readers asked of CUDA: the side streams entered, the current stream, and the
    tensors whose memory was tied to a stream."""

    entered: list[FakeStream]
    current: FakeStream
    held: list[tuple[Tensor, FakeStream]]


@pytest.fixture
def fake_cuda(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeCuda]:
    cuda = FakeCuda([], FakeStream(), [])

    @contextmanager
    def on_stream(stream: FakeStream) -> Iterator[None]:
        cuda.entered.append(stream)
        yield

    monkeypatch.setattr(torch.cuda, "Stream", FakeStream)
    monkeypatch.setattr(torch.cuda, "stream", on_stream)
    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: cuda.current)
    monkeypatch.setattr(Tensor, "record_stream", lambda self, s: cuda.held.append((self, s)))
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    host_buffers.side_stream.cache_clear()
    yield cuda
    host_buffers.side_stream.cache_clear()  # it holds a stand-in


def test_cuda_reads_go_through_pinned_blocks_copied_on_a_side_stream(
    monkeypatch: pytest.MonkeyPatch,
    allocations: list[tuple[torch.device, bool]],
    fake_cuda: FakeCuda,
    features: FeatureSet,
    data: Synthetic,
) -> None:
    monkeypatch.setattr(site_reader, "READ_BYTES", 32 * 2 * DIM * 4)  # one shard a block
    arrival = item_major_reader(features, [0, 2], torch.float32, CUDA)((0, 1))
    # the group on the device, then one pinned host block per shard (5 shards of 32 items)
    assert allocations == [(CUDA0, False)] + [(CPU, True)] * 5
    assert [s.at for s in fake_cuda.entered] == [CUDA0]
    assert isinstance(arrival.copied, FakeEvent) and arrival.copied.on is fake_cuda.entered[0]
    assert fake_cuda.current.waited == [] and fake_cuda.held == []  # none before it is taken
    x = arrival.take()
    assert fake_cuda.current.waited == [arrival.copied]
    assert fake_cuda.held == [(x, fake_cuda.current)]
    assert torch.equal(x, data.feats[:, [0, 2]].float())
    # where one shard of the group's sites exceeds a block, a few sites at a time
    monkeypatch.setattr(site_reader, "READ_BYTES", 2 * 32 * DIM * 4)  # two sites' shards
    allocations.clear()
    x = item_major_reader(features, [3, 0, 2], torch.float32, CUDA)((0, 1, 2)).take()
    assert torch.equal(x, data.feats[:, [3, 0, 2]].float())
    # 5 shards x (sites 3, 0 in one block; site 2 in another): 10 pinned blocks
    assert allocations == [(CUDA0, False)] + [(CPU, True)] * 10


def test_every_cuda_reader_asks_for_pinned_blocks_only(
    allocations: list[tuple[torch.device, bool]],
    fake_cuda: FakeCuda,
    features: FeatureSet,
    data: Synthetic,
) -> None:
    X = site_major_reader(features, range(SITES), CUDA)((1, 3)).take()
    assert torch.equal(X, data.feats[:, [1, 3]].float().transpose(0, 1))
    rows = torch.tensor([3, 4, 40, 100, 159])
    stream = ItemStream(features, [2, 0], budget=SITE_BYTES)
    assert torch.equal(stream.read(rows, CUDA).take(), data.feats[rows][:, [2, 0]].float())
    # each a tensor on the device and pinned blocks: one per site, one for the few rows
    assert allocations == [(CUDA0, False), (CPU, True), (CPU, True), (CUDA0, False), (CPU, True)]
    # one side stream copies every group onto the device
    assert len(set(map(id, fake_cuda.entered))) == 1 and len(fake_cuda.entered) == 2
    assert len(fake_cuda.current.waited) == len(fake_cuda.held) == 2


def test_cpu_arrival_is_the_tensor_itself() -> None:
    x = torch.ones(3)
    assert Arrival(x).take() is x


def test_shard_blocks_cut_only_between_shards() -> None:
    rows = torch.tensor([0, 3, 5, 9, 10, 11, 20, 21, 40])  # shards of 4: 0 0 1 2 2 2 5 5 10
    assert shard_blocks(rows, 4, 3) == [slice(0, 3), slice(3, 6), slice(6, 9)]
    assert shard_blocks(rows, 4, 1) == [
        slice(0, 2), slice(2, 3), slice(3, 6), slice(6, 8), slice(8, 9)
    ]  # fmt: skip
    assert shard_blocks(rows, 4, 100) == [slice(0, 9)]
    assert shard_blocks(torch.tensor([], dtype=torch.long), 4, 3) == []


def test_read_blocks_fills_every_block_of_one_host_tensor() -> None:
    filled: list[object] = []

    def fill(where, buffer: Tensor) -> Tensor:
        filled.append(where)
        return buffer.fill_(float(where.start))

    got = read_blocks((5, 2), torch.float32, CPU, fill, [slice(0, 2), slice(2, 5)]).take()
    assert filled == [slice(0, 2), slice(2, 5)]
    assert torch.equal(got, torch.tensor([[0.0] * 2] * 2 + [[2.0] * 2] * 3))
