"""SDL and ε-sample complexity (Whitney et al. 2020) against a plain implementation."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from probes import (
    MDLBlocks,
    ProbeConfigError,
    ProbeGrid,
    ProbeResults,
    TrainConfig,
    fit_probes,
    random_splits,
)
from probes.sample_complexity import epsilon_sample_complexity, surplus_description_length
from tests.probes.conftest import make_synthetic


def plain_sdl(sizes: list[int], losses: list[float], eps: float) -> float:
    """Σ_{n=0}^{∞} max(0, L(n) − ε) of the step curve, item by item (∞ if it ends above ε)."""
    if losses[-1] > eps:
        return math.inf
    total = 0.0
    for n in range(sizes[-1]):
        at = max(i for i, s in enumerate(sizes) if s <= n)  # the last grid size <= n
        total += max(0.0, losses[at] - eps)
    return total


def plain_esc(sizes: list[int], losses: list[float], eps: float) -> float:
    for n in range(sizes[-1] + 1):
        at = max(i for i, s in enumerate(sizes) if s <= n)
        if losses[at] <= eps:
            return n
    return math.inf


SIZES = [0, 3, 7, 15, 40]
CURVES = [
    [2.0, 1.5, 0.9, 0.6, 0.4],
    [2.0, 1.9, 1.8, 1.7, 1.6],  # never reaches small ε
    [2.0, 0.3, 0.8, 0.2, 0.5],  # noisy: reaches ε, then ends above it
]


@pytest.mark.parametrize("eps", [0.0, 0.25, 0.5, 1.0, 1.85, 2.5])
def test_formulas_match_the_plain_implementation(eps: float) -> None:
    losses = torch.tensor(CURVES, dtype=torch.float64)
    sdl = surplus_description_length(SIZES, losses, eps)
    esc = epsilon_sample_complexity(SIZES, losses, eps)
    for row, curve in enumerate(CURVES):
        assert sdl[row].item() == pytest.approx(plain_sdl(SIZES, curve, eps))
        assert esc[row].item() == plain_esc(SIZES, curve, eps)


def test_sdl_by_hand_and_bad_curves() -> None:
    # ε = 0.5: (3−0)·1.5 + (7−3)·1.0 + (15−7)·0.4 + (40−15)·0.1 = 4.5 + 4 + 3.2 + 2.5
    losses = torch.tensor([CURVES[0]], dtype=torch.float64)
    assert surplus_description_length(SIZES, losses, 0.5).item() == pytest.approx(14.2)
    assert epsilon_sample_complexity(SIZES, losses, 0.5).item() == 40
    nan = torch.tensor([[2.0, math.nan, 0.1]])
    assert surplus_description_length([0, 1, 2], nan, 0.5).isnan().all()
    with pytest.raises(ProbeConfigError, match="starting at 0"):
        surplus_description_length([1, 2], torch.zeros(1, 2), 0.1)


def test_mdl_table_reports_the_test_loss_curve(tmp_path: Path) -> None:
    data = make_synthetic(n=240, sites=2)
    splits = random_splits(240, seed=2)
    blocks = MDLBlocks((0.1, 0.25, 0.5, 1.0))
    config = TrainConfig(epochs=3, batch_size=16)
    res = fit_probes(
        data.feats, data.labels, splits, ProbeGrid(seeds=[0], mdl=blocks), config, progress=False
    )
    table = res.mdl(epsilon=1.0)
    n_train = int(splits.train.sum())
    sizes = [0, *(max(1, round(f * n_train)) for f in blocks.fractions)]
    test = splits.test.nonzero().flatten()
    probes = res.probes.sort("probe")
    logp = torch.log_softmax(res.logits(data.feats).double(), -1)
    item_bits = -logp[:, test].gather(
        2, data.labels[test][None, :, None].expand(len(probes), -1, 1)
    )
    item_bits = item_bits[..., 0] / math.log(2)
    for row in table.iter_rows(named=True):
        assert row["train_sizes"] == sizes
        curve = row["test_bits"]
        assert curve[0] == pytest.approx(math.log2(data.num_classes))
        for size_at, fraction in enumerate(blocks.fractions, start=1):
            at = probes.filter(site=row["site"], mask=fraction)["probe"].item()
            assert curve[size_at] == pytest.approx(item_bits[at].mean().item(), rel=1e-5)
        assert row["sdl_bits"] == pytest.approx(plain_sdl(sizes, curve, 1.0))
        esc = plain_esc(sizes, curve, 1.0)
        assert row["epsilon_sample_complexity"] == (None if esc == math.inf else esc)
    assert "sdl_bits" not in res.mdl().columns
    res.save(tmp_path / "r")
    assert ProbeResults.load(tmp_path / "r").mdl(epsilon=1.0).equals(table)
    with pytest.raises(ProbeConfigError, match="epsilon"):
        res.mdl(epsilon=-1.0)
