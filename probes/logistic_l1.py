"""L1-penalised logistic regression of many probes at once: FISTA, a proximal gradient method.

Each probe minimises scikit-learn's `LogisticRegression(penalty="l1", C=C)` objective (solver
"saga"): `mean_i loss_i + ||W||_1 / (C n)`, the intercept unpenalised. The smooth part is
`LogisticObjective` without its L2 term; the L1 term enters through its proximal map, a soft
threshold, which sets coefficients exactly to zero: the fitted probe reads only a few features
(the few SAE latents that carry a concept, say).

FISTA (Beck & Teboulle 2009, "A fast iterative shrinkage-thresholding algorithm for linear
inverse problems", SIAM J. Imaging Sci. 2(1)) with their backtracking rule for the step `1/L`
per probe, started from a power-iteration estimate of the curvature of each feature block, and
the momentum restarted whenever the objective rises (O'Donoghue & Candès 2015, "Adaptive restart
for accelerated gradient schemes", Found. Comput. Math. 15). A probe stops when the largest entry
of its gradient mapping `L (y - prox(y - grad / L))`, the proximal counterpart of the gradient
that L-BFGS tests, is at most `tol`.
"""

from __future__ import annotations

import torch
from jaxtyping import Float
from torch import Tensor

from probes._grid.lbfgs import LbfgsResult
from probes._grid.logistic_objective import LogisticObjective

POWER_STEPS = 30  # power iterations for the first curvature estimate (backtracking fixes a low one)


def minimize_l1(
    problem: LogisticObjective,
    theta: Float[Tensor, "probe param"],
    weight: float,
    *,
    tol: float,
    max_iter: int,
) -> LbfgsResult:
    """FISTA on `problem` (its L2 penalty must be 0) plus `weight * ||W||_1` from `theta`."""
    p, k, d = theta.shape[0], problem.k, problem.d
    idx = torch.arange(p, device=theta.device)
    penalised = torch.zeros(p, k, d + 1, dtype=torch.bool, device=theta.device)
    penalised[..., :d] = problem.free[..., None]
    penalised = penalised.view(p, -1)

    def total(x: Tensor, f: Tensor) -> Tensor:
        return f + weight * (x.abs() * penalised).sum(dim=1)

    def prox(v: Tensor, step: Tensor) -> Tensor:
        shrunk = torch.sign(v) * (v.abs() - weight * step[:, None]).clamp(min=0)
        return torch.where(penalised, shrunk, v)

    lipschitz = _curvature(problem)[idx // problem.per_group].to(theta.dtype) * 0.25
    x, y = theta.clone(), theta.clone()
    t = torch.ones(p, dtype=theta.dtype, device=theta.device)
    f_y, g_y = problem.fg(y, idx)
    objective = total(x, f_y)
    running = torch.ones(p, dtype=torch.bool, device=theta.device)
    n_iter = torch.zeros(p, dtype=torch.long, device=theta.device)
    n_fev = torch.ones(p, dtype=torch.long, device=theta.device)
    for _ in range(max_iter):
        while True:  # backtracking (Beck & Teboulle, FISTA with backtracking, step 1)
            candidate = prox(y - g_y / lipschitz[:, None], 1.0 / lipschitz)
            f_c, _ = problem.fg(candidate, idx)
            n_fev += running
            move = candidate - y
            bound = f_y + (g_y * move).sum(1) + 0.5 * lipschitz * (move * move).sum(1)
            fits = f_c <= bound + 1e-12 * bound.abs()
            if bool((fits | ~running).all()):
                break
            lipschitz = torch.where(fits | ~running, lipschitz, 2 * lipschitz)
        mapping = (lipschitz[:, None] * (y - candidate)).abs().amax(dim=1)
        new_objective = total(candidate, f_c)
        restart = new_objective > objective
        t_next = (1 + torch.sqrt(1 + 4 * t * t)) / 2
        momentum = torch.where(restart, torch.zeros_like(t), (t - 1) / t_next)
        y_next = candidate + momentum[:, None] * (candidate - x)
        keep = running[:, None]
        x = torch.where(keep, candidate, x)
        y = torch.where(keep, y_next, y)
        objective = torch.where(running, new_objective, objective)
        t = torch.where(running & ~restart, t_next, torch.ones_like(t))
        n_iter += running
        running &= mapping > tol
        if not bool(running.any()):
            break
        f_y, g_y = problem.fg(y, idx)
        n_fev += running
    return LbfgsResult(x, objective, n_iter, n_fev, ~running)


def _curvature(problem: LogisticObjective) -> Float[Tensor, " group"]:
    """The largest eigenvalue of `[X, 1]^T [X, 1] / n` per feature block (power iteration)."""
    X = problem.X
    n, d = X.shape[1], X.shape[2]
    gen = torch.Generator(device=X.device).manual_seed(0)
    v = torch.randn(X.shape[0], d + 1, generator=gen, device=X.device, dtype=X.dtype)
    value = torch.ones(X.shape[0], dtype=X.dtype, device=X.device)
    for _ in range(POWER_STEPS):
        v = v / v.norm(dim=1, keepdim=True)
        rows = torch.bmm(X, v[:, :d, None]).squeeze(-1) + v[:, d, None]  # [G, n]
        w = torch.cat([torch.bmm(rows[:, None, :], X).squeeze(1), rows.sum(1, keepdim=True)], 1)
        w = w / n
        value = (w * v).sum(dim=1)
        v = w
    return value.clamp(min=torch.finfo(X.dtype).tiny)
