"""Batched L-BFGS: many independent smooth problems minimised in lockstep.

Each problem keeps its own history (ring of the last `history` pairs), step and convergence
test; converged problems leave the batch, so `fg` is only ever asked about the ones still
running. The stopping rule is scipy L-BFGS-B's (as used by scikit-learn): the largest absolute
gradient entry at most `tol`, or a relative decrease of f of at most 64 float64 epsilons; a
problem whose line search fails stops unconverged. Steps come from a
backtracking Armijo search (the objectives here are convex, so curvature pairs with s.y <= 0
are simply skipped).

An optional preconditioner `M` (a symmetric positive definite approximation of the inverse
Hessian, applied by `precondition(v, idx)`) replaces the scaled identity that starts the
two-loop recursion (`H0 = gamma M`, gamma = s.y / y.My, Nocedal & Wright §7.2): the iterates
then follow the preconditioned path, while the objective, the optimum and the stopping rule stay
the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from jaxtyping import Bool, Float, Int
from torch import Tensor

Objective = Callable[[Tensor, Tensor], tuple[Tensor, Tensor]]
Preconditioner = Callable[[Tensor, Tensor], Tensor]
ARMIJO = 1e-4  # sufficient-decrease constant (Nocedal & Wright, Alg. 3.1)


@dataclass
class LbfgsResult:
    """Solutions, objective values, iterations, objective evaluations (each one f and its
    gradient) and whether each problem met `tol`."""

    x: Float[Tensor, "problem param"]
    f: Float[Tensor, " problem"]
    n_iter: Int[Tensor, " problem"]
    n_fev: Int[Tensor, " problem"]
    converged: Bool[Tensor, " problem"]


def minimize_lbfgs(
    fg: Objective,
    x0: Float[Tensor, "problem param"],
    *,
    tol: float,
    max_iter: int,
    history: int = 10,
    max_ls: int = 30,
    precondition: Preconditioner | None = None,
) -> LbfgsResult:
    """Minimise P problems; `fg(x[idx], idx)` returns `(f [len(idx)], grad [len(idx), param])`;
    `precondition(v[idx], idx)` (optional) returns `M v` for the problems `idx`."""
    n_prob, n_par = x0.shape
    dev, dt = x0.device, x0.dtype
    ftol = 64 * torch.finfo(torch.float64).eps  # sklearn's lbfgs ftol (scipy runs in float64)
    x = x0.clone()
    f, g = fg(x, torch.arange(n_prob, device=dev))
    s_hist = torch.zeros(n_prob, history, n_par, device=dev, dtype=dt)
    y_hist = torch.zeros_like(s_hist)
    rho = torch.zeros(n_prob, history, device=dev, dtype=dt)
    count = torch.zeros(n_prob, dtype=torch.int64, device=dev)
    n_iter = torch.zeros(n_prob, dtype=torch.int64, device=dev)
    n_fev = torch.ones(n_prob, dtype=torch.int64, device=dev)
    converged = g.abs().amax(dim=1) <= tol
    stopped = converged.clone()
    for _ in range(max_iter):
        idx = (~stopped).nonzero().flatten()
        if idx.numel() == 0:
            break
        h0 = None if precondition is None else (lambda v, i=idx: precondition(v, i))
        d = -_two_loop(g[idx], s_hist[idx], y_hist[idx], rho[idx], count[idx], h0)
        slope = (g[idx] * d).sum(dim=1)
        descent = slope < 0
        d = torch.where(descent[:, None], d, -g[idx])
        slope = torch.where(descent, slope, -(g[idx] ** 2).sum(dim=1))
        first = count[idx] == 0
        step = torch.where(first, (1 / d.norm(dim=1)).clamp(max=1.0), torch.ones_like(slope))
        x_new, f_new, g_new, found, evals = _armijo(fg, x[idx], f[idx], d, slope, step, idx, max_ls)
        n_iter[idx] += 1
        n_fev[idx] += evals
        s, y = x_new - x[idx], g_new - g[idx]
        sy = (s * y).sum(dim=1)
        keep = found & (sy > 1e-10 * (y * y).sum(dim=1))
        slot = count[idx] % history
        pos_k, slot_k = idx[keep], slot[keep]
        s_hist[pos_k, slot_k], y_hist[pos_k, slot_k] = s[keep], y[keep]
        rho[pos_k, slot_k] = 1 / sy[keep]
        count[pos_k] += 1
        decrease = (f[idx] - f_new) / torch.maximum(f[idx].abs(), f_new.abs()).clamp(min=1.0)
        x[idx] = torch.where(found[:, None], x_new, x[idx])
        f[idx] = torch.where(found, f_new, f[idx])
        g[idx] = torch.where(found[:, None], g_new, g[idx])
        met = (g[idx].abs().amax(dim=1) <= tol) | (found & (decrease <= ftol))
        converged[idx] = met
        stopped[idx] = met | ~found
    return LbfgsResult(x, f, n_iter, n_fev, converged)


def _two_loop(
    g: Tensor,
    s_hist: Tensor,
    y_hist: Tensor,
    rho: Tensor,
    count: Tensor,
    h0: Callable[[Tensor], Tensor] | None = None,
) -> Tensor:
    """H_k g by the two-loop recursion, per problem over its own stored pairs; the initial
    matrix is gamma I, or gamma M with `h0(v) = M v`."""
    m = s_hist.shape[1]
    rows = torch.arange(g.shape[0], device=g.device)
    q = g.clone()
    alphas, slots, valid = [], [], []
    for j in range(1, m + 1):
        slot = (count - j) % m
        ok = (count >= j).to(g.dtype)
        a = rho[rows, slot] * ok * (s_hist[rows, slot] * q).sum(dim=1)
        q -= a[:, None] * y_hist[rows, slot]
        alphas.append(a)
        slots.append(slot)
        valid.append(ok)
    last = (count - 1) % m
    y_last, s_last = y_hist[rows, last], s_hist[rows, last]
    if h0 is None:
        my_last, r = y_last, q
    else:
        my_last, r = h0(y_last), h0(q)
    gamma = (s_last * y_last).sum(dim=1) / (y_last * my_last).sum(dim=1).clamp(min=1e-300)
    r = r * torch.where(count > 0, gamma, torch.ones_like(gamma))[:, None]
    for a, slot, ok in zip(reversed(alphas), reversed(slots), reversed(valid)):
        b = rho[rows, slot] * ok * (y_hist[rows, slot] * r).sum(dim=1)
        r += s_hist[rows, slot] * ((a - b) * ok)[:, None]
    return r


def _armijo(
    fg: Objective,
    x: Tensor,
    f: Tensor,
    d: Tensor,
    slope: Tensor,
    step: Tensor,
    idx: Tensor,
    max_ls: int,
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Backtracking (halving) until f(x + t d) <= f + c t slope, per problem."""
    x_new, f_new = x.clone(), f.clone()
    g_new = torch.zeros_like(x)
    found = torch.zeros_like(f, dtype=torch.bool)
    evals = torch.zeros_like(f, dtype=torch.int64)
    t = step.clone()
    for _ in range(max_ls):
        todo = (~found).nonzero().flatten()
        if todo.numel() == 0:
            break
        trial = x[todo] + t[todo, None] * d[todo]
        f_t, g_t = fg(trial, idx[todo])
        evals[todo] += 1
        ok = f_t <= f[todo] + ARMIJO * t[todo] * slope[todo]
        done = todo[ok]
        x_new[done], f_new[done], g_new[done] = trial[ok], f_t[ok], g_t[ok]
        found[done] = True
        t[todo[~ok]] *= 0.5
    return x_new, f_new, g_new, found, evals
