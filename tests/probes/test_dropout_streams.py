"""Dropout keep masks: the 16-bit draw rule keeps each input with probability 1 - p (at a
resolution of 2^-16) and scales kept inputs so their mean is unchanged."""

from __future__ import annotations

import pytest
import torch
from scipy import stats

from probes._grid.streams import DropoutStreams, keep_rule


@pytest.mark.parametrize("p", [0.1, 0.2, 0.5, 0.9])
def test_keep_rate_and_mean_match_p(p: float) -> None:
    streams = DropoutStreams(
        (0, 1), [1000], p, batch_size=64, dim=384, steps=40, slots=1, device=torch.device("cpu")
    )
    keep = streams.draw(0, 0, 1, [64] * 40)
    kept = keep > 0
    n, k = kept.numel(), int(kept.sum())
    dropped = round(p * 2**16) / 2**16
    # a two-sided binomial test of the keep rate at the quantised probability
    assert stats.binomtest(k, n, 1 - dropped).pvalue > 1e-3
    assert abs(k / n - (1 - p)) < 4 * (p * (1 - p) / n) ** 0.5 + 2**-16
    assert torch.allclose(keep[kept], torch.tensor(1 / (1 - dropped)))
    # elements are independent across the four quarters of a 64-bit draw and across rows
    quarters = kept.reshape(-1, 4).float()
    corr = torch.corrcoef(quarters.T)
    assert (corr - torch.eye(4)).abs().max() < 0.02


def test_keep_rule_threshold_and_scale_by_hand() -> None:
    # p = 0.2: round(13107.2) = 13107 of 65536 levels drop; signed draws >= 13107 - 32768 keep
    assert keep_rule(0.2) == (13107 - 32768, 65536 / (65536 - 13107))
    assert keep_rule(0.0) == (-32768, 1.0)  # every signed 16-bit value is >= -32768
    threshold, scale = keep_rule(1 - 2**-20)  # rounds to all levels: one level is kept
    assert threshold == 32767 and scale == 65536.0


def test_same_generator_key_same_masks_and_p_zero_draws_nothing() -> None:
    def draw(p: float) -> torch.Tensor:
        streams = DropoutStreams(
            (3,), [500], p, batch_size=8, dim=16, steps=3, slots=1, device=torch.device("cpu")
        )
        return streams.draw(0, 0, 0, [8, 8, 5])[:, :5].clone()

    torch.testing.assert_close(draw(0.3), draw(0.3), rtol=0, atol=0)
    assert bool((draw(0.0) == 1).all())


@pytest.mark.parametrize(
    ("dim", "batch", "sizes"),
    [(16, 8, [8, 8, 5]), (7, 5, [5, 5, 3]), (3, 4, [4, 4, 1]), (6, 4, [4, 4, 4, 2])],
)
def test_a_chunk_draws_each_step_from_whole_words_in_sequence(
    dim: int, batch: int, sizes: list[int]
) -> None:
    """A chunk's masks are those of drawing each step on its own: ceil(rows * dim / 4) 64-bit
    words from the (mask, seed)'s generator, read as signed 16-bit values; a step's leftover
    quarters are skipped. So the masks do not depend on how steps are grouped into chunks."""
    p = 0.3
    streams = DropoutStreams(
        (5,), [100], p, batch_size=batch, dim=dim, steps=4, slots=1, device=torch.device("cpu")
    )
    chunk = streams.draw(0, 0, 0, sizes).clone()
    twin = DropoutStreams(
        (5,), [100], p, batch_size=batch, dim=dim, steps=4, slots=1, device=torch.device("cpu")
    )
    generator = twin.generators[0][0]
    threshold, scale = keep_rule(p)
    for step, size in enumerate(sizes):
        words = torch.empty(-(-size * dim // 4), dtype=torch.int64)
        words.random_(-(2**63), None, generator=generator)
        expected = (words.view(torch.int16)[: size * dim].view(size, dim) >= threshold) * scale
        assert torch.equal(chunk[step, :size], expected.float()), step
