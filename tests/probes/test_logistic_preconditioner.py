"""The L-BFGS preconditioner: the (curvature-weighted) Gram inverse, its refresh, and the
oneDNN product the objective runs on."""

from __future__ import annotations

from functools import partial

import pytest
import torch

from probes._grid.lbfgs import Preconditioner, minimize_lbfgs
from probes._grid.logistic_objective import GRAM_RIDGE, ROW_BLOCK, LogisticObjective
from probes._grid.onednn_matmul import matmul_nt, onednn_available
from probes._grid.workers import worker_pool
from probes.logistic import ILL_CONDITIONED


def reference_inverse(x: torch.Tensor, w: torch.Tensor, penalty: float) -> torch.Tensor:
    """inv([X, 1]^T diag(w) [X, 1] / n + ridge I), written out in float64."""
    xt = torch.cat([x, torch.ones(len(x), 1, dtype=x.dtype)], dim=1).double()
    gram = (xt * w.double()[:, None]).T @ xt / len(x)
    ridge = max(GRAM_RIDGE * float(gram.diagonal().mean()), penalty)
    return torch.linalg.inv(gram + ridge * torch.eye(len(gram), dtype=torch.float64))


def softmax_curvature(x: torch.Tensor, theta: torch.Tensor, present: torch.Tensor) -> torch.Tensor:
    """Per row, sum_k p_k (1 - p_k) of one probe at `theta` [K, D + 1] (absent classes: p = 0)."""
    z = x.double() @ theta[:, :-1].T.double() + theta[:, -1].double()
    p = torch.softmax(z.masked_fill(~present, -torch.inf), dim=1)
    return (p * (1 - p)).sum(dim=1)


def test_plain_and_curvature_weighted_gram_inverses_match_their_formulas() -> None:
    gen = torch.Generator().manual_seed(0)
    n, d, k = 9000, 5, 4  # three row blocks
    x = torch.randn(2, n, d, generator=gen, dtype=torch.float64) * torch.tensor([1, 3, 0.2, 1, 2])
    y = torch.randint(0, k, (4, n), generator=gen)
    y[3] = y[3] % 3  # probe 3 never sees class 3
    theta = torch.randn(4, k, d + 1, generator=gen, dtype=torch.float64)
    v = torch.randn(4, k * (d + 1), generator=gen, dtype=torch.float64)
    with worker_pool(2) as pool:
        problem = LogisticObjective(x, y, 0.5, None, pool)
        plain = problem.preconditioner()
        idx = torch.tensor([1, 2, 3])  # probe 1 alone on block 0, probes 2 and 3 on block 1
        weighted = problem.preconditioner(theta[idx].reshape(3, -1), idx)
        got_plain, got_weighted = plain(v, torch.arange(4)), weighted(v[idx], idx)
    for probe in range(4):
        want = v[probe].view(k, d + 1) @ reference_inverse(x[probe // 2], torch.ones(n), 1 / n)
        torch.testing.assert_close(got_plain[probe].view(k, d + 1), want)
    present = [problem.present[p] for p in range(4)]
    w_first = softmax_curvature(x[0], theta[1], present[1])
    w_second = (
        softmax_curvature(x[1], theta[2], present[2])
        + softmax_curvature(x[1], theta[3], present[3])
    ) / 2  # averaged over the probes that read the block
    for row, probe, w in ((0, 1, w_first), (1, 2, w_second), (2, 3, w_second)):
        want = v[probe].view(k, d + 1) @ reference_inverse(x[probe // 2], w, 1 / (0.5 * n))
        torch.testing.assert_close(got_weighted[row].view(k, d + 1), want)


def test_refresh_swaps_the_preconditioner_once_for_the_running_problems() -> None:
    gen = torch.Generator().manual_seed(1)
    a = torch.randn(3, 8, 8, generator=gen, dtype=torch.float64)
    hess = a @ a.transpose(1, 2) + torch.diag_embed(torch.logspace(-3, 1, 8, dtype=torch.float64))
    b = torch.randn(3, 8, generator=gen, dtype=torch.float64)
    solution = torch.linalg.solve(hess, b)

    def fg(x: torch.Tensor, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hx = (hess[idx] @ x[..., None])[..., 0]
        return 0.5 * (x * hx).sum(1) - (b[idx] * x).sum(1), hx - b[idx]

    calls: list[tuple[torch.Tensor, torch.Tensor]] = []

    def exact(x: torch.Tensor, idx: torch.Tensor) -> Preconditioner:
        calls.append((x.clone(), idx.clone()))
        return lambda v, i: torch.linalg.solve(hess[i], v)

    res = minimize_lbfgs(
        fg,
        torch.zeros(3, 8, dtype=torch.float64),
        tol=1e-10,
        max_iter=500,
        precondition=lambda v, i: v,
        refresh=exact,
        refresh_at=3,
    )
    assert len(calls) == 1
    x_then, ids_then = calls[0]
    assert ids_then.tolist() == [0, 1, 2] and x_then.abs().sum() > 0  # the iterates at step 3
    torch.testing.assert_close(res.x, solution, atol=1e-8, rtol=1e-8)
    assert bool(res.converged.all())
    # with the exact inverse Hessian from iteration 3 on, a quadratic is solved a step later
    assert int(res.n_iter.max()) <= 5
    unrefreshed = minimize_lbfgs(
        fg, torch.zeros(3, 8, dtype=torch.float64), tol=1e-10, max_iter=500
    )
    assert int(unrefreshed.n_iter.max()) > 5


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_matmul_nt_is_a_times_b_transposed(dtype: torch.dtype) -> None:
    gen = torch.Generator().manual_seed(2)
    a = torch.randn(17, 384, generator=gen).to(dtype)
    rows = torch.randn(5000, 384, generator=gen).to(dtype)
    dz = torch.randn(17, 5000, generator=gen).to(dtype)
    tol = {"rtol": 1e-4, "atol": 1e-3} if dtype == torch.float32 else {}
    torch.testing.assert_close(matmul_nt(a, rows), (a.double() @ rows.double().T).to(dtype), **tol)
    torch.testing.assert_close(  # b as a transposed view: the objective's backward product
        matmul_nt(dz, rows.T), (dz.double() @ rows.double()).to(dtype), **tol
    )
    assert isinstance(onednn_available(), bool)


def ill_conditioned_problem(
    gen: torch.Generator, n: int = 600, d: int = 30
) -> tuple[torch.Tensor, torch.Tensor]:
    """Features scaled over four decades (slow without a preconditioner), a task and a random
    label probe on them."""
    scales = torch.logspace(-2, 2, d, dtype=torch.float64)
    x = torch.randn(1, n, d, generator=gen, dtype=torch.float64) * scales
    y = torch.stack(
        [
            (x[0] @ torch.randn(d, 3, generator=gen, dtype=torch.float64)).argmax(1),
            torch.randint(0, 3, (n,), generator=gen),
        ]
    )
    return x, y


def test_condition_estimate_separates_isotropic_from_low_rank_features() -> None:
    gen = torch.Generator().manual_seed(4)
    n, d = 5000, 40
    isotropic = torch.randn(n, d, generator=gen, dtype=torch.float64)
    # layer-normalised rows: centred and scaled, so [X, 1] spans d of its d + 1 directions
    normed = torch.nn.functional.layer_norm(
        isotropic @ torch.randn(d, d, generator=gen).double(), (d,)
    )
    y = torch.randint(0, 3, (2, n), generator=gen)
    with worker_pool(1) as pool:
        kappa = LogisticObjective(torch.stack([isotropic, normed]), y, 1.0, None, pool)
        estimate = kappa.condition_estimate()
    # 4 (d + 1) rows are fewer than one row block: the estimate reads the first block alone
    sample = isotropic[:ROW_BLOCK]
    xt = torch.cat([sample, torch.ones(ROW_BLOCK, 1, dtype=torch.float64)], dim=1)
    eig = torch.linalg.eigvalsh(xt.T @ xt / ROW_BLOCK)
    floor = 4 / n  # 4 x the L2 penalty 1 / (C n)
    assert float(estimate[0]) == pytest.approx(float((eig[-1] + floor) / (eig[0] + floor)))
    assert float(estimate[0]) < 5 < ILL_CONDITIONED < float(estimate[1])


def test_a_cold_fit_starts_preconditioned_only_on_ill_conditioned_feature_blocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from probes import fit_logistic_regression
    from probes._grid.lbfgs import REFRESH_AT

    built: list[tuple[int, list[int] | None]] = []
    original = LogisticObjective.preconditioner

    def counted(self, theta=None, idx=None, blocks=None):  # type: ignore[no-untyped-def]
        built.append((-1 if idx is None else len(idx), blocks))
        return original(self, theta, idx, blocks)

    monkeypatch.setattr(LogisticObjective, "preconditioner", counted)
    gen = torch.Generator().manual_seed(3)
    easy = torch.randn(1, 300, 4, generator=gen, dtype=torch.float64)
    y_easy = (easy[0, :, 0] + 2 * torch.randn(300, generator=gen, dtype=torch.float64) > 0).long()
    quick = fit_logistic_regression(easy, y_easy[None])
    assert int(quick.n_iter_.max()) < REFRESH_AT and built == []  # well-conditioned, converged
    hard, y_hard = ill_conditioned_problem(gen)
    slow = fit_logistic_regression(hard, y_hard, max_iter=500)
    assert int(slow.n_iter_.min()) > REFRESH_AT
    # the plain Gram inverse from the start, then once at REFRESH_AT weighted at the iterates
    # of both running probes
    assert built == [(-1, [0]), (2, None)]


def test_each_feature_block_chooses_its_start_alone() -> None:
    """A well- and an ill-conditioned site fitted together give each the numbers of its own fit."""
    from probes import fit_logistic_regression

    gen = torch.Generator().manual_seed(5)
    hard, y_hard = ill_conditioned_problem(gen)
    easy = torch.randn(1, 600, 30, generator=gen, dtype=torch.float64)
    y_easy = torch.stack([(easy[0, :, 0] > 0).long(), torch.randint(0, 3, (600,), generator=gen)])
    fit = partial(fit_logistic_regression, max_iter=300)
    both = fit(torch.cat([easy, hard]), torch.cat([y_easy, y_hard]))
    alone = [fit(easy, y_easy), fit(hard, y_hard)]
    assert bool(both.converged_.all())
    for half, one in enumerate(alone):
        rows = slice(2 * half, 2 * half + 2)
        # equal up to rounding: the refresh at REFRESH_AT stacks the blocks still running
        torch.testing.assert_close(both.coef_[rows], one.coef_, rtol=1e-7, atol=1e-9)
        assert both.n_iter_[rows].tolist() == one.n_iter_.tolist()
