"""The TorchScript chunk of training steps gives bit-for-bit the Python loop's probes."""

from __future__ import annotations

import pytest
import torch

import probes._grid.fused_steps
import probes.train
from probes import MDLBlocks, ProbeGrid, TrainConfig, fit_probes, random_splits
from probes._grid.block_inputs import ROWS_IN_PLACE, SEEDS_OUTER, input_layout
from probes._grid.blocks import unit_groups
from probes._grid.fused_steps import linear_chunk
from probes._grid.optim import MaskedAdamW
from probes.linear import LinearProbes
from tests.probes.conftest import Synthetic, make_synthetic


def fit_both(
    monkeypatch: pytest.MonkeyPatch,
    feats: torch.Tensor,
    targets: torch.Tensor,
    grid: ProbeGrid,
    config: TrainConfig,
    keys: torch.Tensor | None = None,
    device: str | None = None,
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """Weights of the same fit through the fused chunk and through the Python loop (on `device`,
    default the trainer's own choice: CUDA where the suite leaves it visible)."""
    splits = random_splits(feats.shape[0], seed=3)
    args = (feats, targets, splits, grid, config)
    fused = fit_probes(*args, keys=keys, device=device, progress=False)
    with monkeypatch.context() as patch:
        patch.setattr(probes._grid.fused_steps, "linear_chunk", lambda: None)
        loop = fit_probes(*args, keys=keys, device=device, progress=False)
    assert fused.metrics.equals(loop.metrics)
    assert fused.probes.equals(loop.probes)
    return fused.weights, loop.weights


def assert_identical(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert torch.equal(a[name], b[name]), name


def test_torchscript_compiles_the_chunk() -> None:
    assert linear_chunk() is not None


@pytest.mark.parametrize(
    "config",
    [
        TrainConfig(epochs=3, batch_size=16),
        TrainConfig(epochs=3, batch_size=16, shared_order=True),
        TrainConfig(epochs=2, batch_size=16, compute="bfloat16"),
        TrainConfig(epochs=2, batch_size=16, dropout=0.0, threads=2),
    ],
    ids=["per-seed-orders", "shared-order", "bfloat16", "no-dropout-two-threads"],
)
def test_classification_grid_equals_the_python_loop(
    monkeypatch: pytest.MonkeyPatch, synthetic: Synthetic, config: TrainConfig
) -> None:
    grid = ProbeGrid(seeds=(0, 1, 2), train_fractions=(0.5, 1.0))
    fused, loop = fit_both(monkeypatch, synthetic.feats, synthetic.labels, grid, config)
    assert_identical(fused, loop)


def test_mdl_blocks_equal_the_python_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    data = make_synthetic(n=400, sites=2)
    grid = ProbeGrid(seeds=(0,), control=False, mdl=MDLBlocks((0.1, 0.5, 1.0)))
    fused, loop = fit_both(monkeypatch, data.feats, data.labels, grid, TrainConfig(epochs=2))
    assert_identical(fused, loop)


def test_multilabel_and_regression_heads_equal_the_python_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gen = torch.Generator().manual_seed(0)
    feats = torch.randn(300, 3, 6, generator=gen)
    config = TrainConfig(epochs=3, batch_size=16, lr=3e-2)
    value = feats[:, 1, 0] - feats[:, 1, 1]
    assert_identical(*fit_both(monkeypatch, feats, value, ProbeGrid(seeds=(0, 1)), config))
    labels = torch.stack([feats[:, 1, 0] > 0, feats[:, 1, 2] > 0.5, feats[:, 2, 3] < 0], 1)
    grid = ProbeGrid(seeds=(0, 1))
    assert_identical(*fit_both(monkeypatch, feats, labels.long(), grid, config))


def spy_on_layouts(patch: pytest.MonkeyPatch) -> list[int]:
    """The input layout chosen for each block of the fits that follow."""
    chosen: list[int] = []

    def spy(seeds_outer: bool, covered: int, same_dtype: bool) -> int:
        chosen.append(input_layout(seeds_outer, covered, same_dtype))
        return chosen[-1]

    patch.setattr(probes.train, "input_layout", spy)
    return chosen


def assert_in_place_equals_permuted(
    monkeypatch: pytest.MonkeyPatch,
    synthetic: Synthetic,
    grid: ProbeGrid,
    config: TrainConfig,
    device: str | None = None,
) -> list[int]:
    """Fits the grid with the layouts the trainer chooses, then with every block forced to the
    permuting layout: the probes are bit for bit the same (fused chunk and Python loop alike).
    Returns the layouts chosen."""
    data = (synthetic.feats, synthetic.labels, grid, config)
    with monkeypatch.context() as patch:
        chosen = spy_on_layouts(patch)
        in_place = fit_both(monkeypatch, *data, device=device)
    assert_identical(*in_place)
    with monkeypatch.context() as patch:
        patch.setattr(probes.train, "input_layout", lambda *args: SEEDS_OUTER)
        permuted = fit_both(monkeypatch, *data, device=device)
    assert_identical(in_place[0], permuted[0])
    return chosen


@pytest.mark.parametrize("kind", ["linear", "mlp"])
def test_one_seed_blocks_gather_in_place_with_the_same_probes(
    monkeypatch: pytest.MonkeyPatch, synthetic: Synthetic, kind: str
) -> None:
    """Per-seed order on two CPU workers cuts 2 seeds x 3 sites into one block per seed, whose
    rows are gathered straight into its buffer (`ROWS_IN_PLACE`); the probes are bit for bit
    those of the permuting layout, through the fused chunk and the Python loop alike (MLP probes:
    the Python loop only). The CPU is named: a GPU fit has one block, of both seeds."""
    grid = ProbeGrid(seeds=(0, 1), control=True, kind=kind, hidden=8)  # type: ignore[arg-type]
    config = TrainConfig(epochs=2, batch_size=16, threads=2)
    chosen = assert_in_place_equals_permuted(monkeypatch, synthetic, grid, config, "cpu")
    assert chosen == [ROWS_IN_PLACE] * 4  # two blocks, in each of the two fits


def test_one_seed_blocks_gather_in_place_on_the_default_device(
    monkeypatch: pytest.MonkeyPatch, synthetic: Synthetic
) -> None:
    """The in-place gather on the trainer's own device (CUDA when `LINGPROBE_TEST_CUDA=1` leaves a
    GPU visible), with blocks cut one seed each: a GPU fit makes one block of up to 8 seeds, so
    only such a cut reaches the in-place layout there. The probes are the permuting layout's."""

    def one_seed_each(n_outer: int, n_inner: int, *args: object) -> list[slice]:
        return [slice(o * n_inner, (o + 1) * n_inner) for o in range(n_outer)]

    monkeypatch.setattr(probes.train, "unit_groups", one_seed_each)
    grid = ProbeGrid(seeds=(0, 1, 2), control=True)
    config = TrainConfig(epochs=2, batch_size=16)
    chosen = assert_in_place_equals_permuted(monkeypatch, synthetic, grid, config)
    assert chosen == [ROWS_IN_PLACE] * 6  # three blocks, in each of the two fits


def test_fused_adamw_gets_parameters_gradients_and_moments_of_one_shape() -> None:
    """CUDA's fused AdamW kernel refuses tensors of different shapes in one call (the CPU's
    does not), so the chunk hands it every tensor in the parameters' fused shape."""
    layout = ProbeGrid(seeds=(0, 1, 2), control=True).layout(5)
    probes_ = LinearProbes(layout, dim=6, out=4)
    names = list(probes_.params)
    blocks = [(0, units) for units in unit_groups(5, 3, 2)]
    opt = MaskedAdamW(
        [probes_.params[n] for n in names],
        [probes_.grads[n] for n in names],
        [10],
        TrainConfig(),
        blocks,
    )
    for block in blocks:
        exp_avg, exp_avg_sq, _ = opt.moments(block)
        for k, name in enumerate(names):
            shape = probes_.fused(probes_.params[name], block).shape
            assert probes_.fused(probes_.grads[name], block).shape == shape
            assert exp_avg[k].shape == shape and exp_avg_sq[k].shape == shape
