"""Batched L-BFGS: many independent smooth problems minimised in lockstep.

Each problem keeps its own history (the last `history` curvature pairs), step and convergence
test. The running problems are kept packed at the front of every state tensor: a problem that
stops is written out and the rest are compacted (at most once per problem), so `fg` is only ever
asked about the running ones and no step gathers scattered rows. The stopping rule is scipy
L-BFGS-B's (as used by scikit-learn): the largest absolute gradient entry at most `tol`, or a
relative decrease of f of at most 64 float64 epsilons; a problem whose line search fails stops
unconverged. Steps come from a backtracking Armijo search (the objectives here are convex).

All problems write their pair of an iteration into the same ring slot (`iteration % history`),
so the two-loop recursion reads one slot of every problem as a plain view. A pair that fails the
curvature test (`s.y <= 1e-10 y.y`, skipped by the classic method) is stored as zeros with
`rho = 0`: it then leaves the recursion unchanged, and takes the place of the problem's oldest
pair.

An optional preconditioner `M` (a symmetric positive definite approximation of the inverse
Hessian, applied by `precondition(v, idx)`) replaces the scaled identity that starts the
two-loop recursion (`H0 = gamma M`, gamma = s.y / y.My of the newest kept pair, Nocedal & Wright
§7.2): the iterates then follow the preconditioned path, while the objective, the optimum and
the stopping rule stay the same. `refresh` replaces M once, at iteration `REFRESH_AT`, with one
built at the iterates reached by then, or brings one in there where the problems started
without (a problem that converges sooner then never pays for building it). The stored pairs
stay: they are exact curvature pairs of the objective, whatever M is; gamma is recomputed with
the new M at the next kept pair.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from jaxtyping import Bool, Float, Int
from torch import Tensor

Objective = Callable[[Tensor, Tensor], tuple[Tensor, Tensor]]
Preconditioner = Callable[[Tensor, Tensor], Tensor]
Refresh = Callable[[Tensor, Tensor], Preconditioner]
ARMIJO = 1e-4  # sufficient-decrease constant (Nocedal & Wright, Alg. 3.1)
CURVATURE = 1e-10  # a pair is kept when s.y > CURVATURE * y.y
REFRESH_AT = 10  # iteration at which `refresh` rebuilds the preconditioner (see minimize_lbfgs)


@dataclass
class LbfgsResult:
    """Solutions, objective values, iterations, objective evaluations (each one f and its
    gradient) and whether each problem met `tol`."""

    x: Float[Tensor, "problem param"]
    f: Float[Tensor, " problem"]
    n_iter: Int[Tensor, " problem"]
    n_fev: Int[Tensor, " problem"]
    converged: Bool[Tensor, " problem"]


@dataclass
class _Running:
    """State of the problems still running, packed: row r is problem `ids[r]`."""

    ids: Tensor
    x: Tensor
    f: Tensor
    g: Tensor
    s_hist: Tensor  # [running, history, param], slot = iteration % history
    y_hist: Tensor
    rho: Tensor  # [running, history]; 0 for empty or skipped slots
    gamma: Tensor  # [running]: s.y / y.My of the newest kept pair (1 before any)
    kept: Tensor  # [running]: pairs kept so far
    n_iter: Tensor
    n_fev: Tensor

    def keep_rows(self, rows: Tensor) -> _Running:
        return _Running(*(getattr(self, name)[rows] for name in self.__dataclass_fields__))


def minimize_lbfgs(
    fg: Objective,
    x0: Float[Tensor, "problem param"],
    *,
    tol: float,
    max_iter: int,
    history: int = 10,
    max_ls: int = 30,
    precondition: Preconditioner | None = None,
    refresh: Refresh | None = None,
    refresh_at: int = REFRESH_AT,
) -> LbfgsResult:
    """Minimise P problems; `fg(x[idx], idx)` returns `(f [len(idx)], grad [len(idx), param])`;
    `precondition(v[idx], idx)` (optional) returns `M v` for the problems `idx`; `refresh(x, idx)`
    (optional) returns a new preconditioner for the problems still running at iteration
    `refresh_at`, built at their iterates `x`."""
    n_prob, n_par = x0.shape
    dev, dt = x0.device, x0.dtype
    ftol = 64 * torch.finfo(torch.float64).eps  # sklearn's lbfgs ftol (scipy runs in float64)
    ids = torch.arange(n_prob, device=dev)
    f0, g0 = fg(x0, ids)
    out = LbfgsResult(
        x=x0.clone(),
        f=f0.clone(),
        n_iter=torch.zeros(n_prob, dtype=torch.int64, device=dev),
        n_fev=torch.ones(n_prob, dtype=torch.int64, device=dev),
        converged=g0.abs().amax(dim=1) <= tol,
    )
    run = _Running(
        ids=ids,
        x=x0.clone(),
        f=f0,
        g=g0,
        s_hist=torch.zeros(n_prob, history, n_par, device=dev, dtype=dt),
        y_hist=torch.zeros(n_prob, history, n_par, device=dev, dtype=dt),
        rho=torch.zeros(n_prob, history, device=dev, dtype=dt),
        gamma=torch.ones(n_prob, device=dev, dtype=dt),
        kept=torch.zeros(n_prob, dtype=torch.int64, device=dev),
        n_iter=out.n_iter.clone(),
        n_fev=out.n_fev.clone(),
    )
    run = run.keep_rows((~out.converged).nonzero().flatten())
    for it in range(max_iter):
        if run.ids.numel() == 0:
            break
        ids = run.ids
        if it == refresh_at and refresh is not None:
            precondition = refresh(run.x, ids)
        h0 = None if precondition is None else _for_running(precondition, ids)
        d = _two_loop(run, it, h0)
        d.neg_()
        slope = torch.linalg.vecdot(run.g, d)
        descent = slope < 0
        if not bool(descent.all()):
            d = torch.where(descent[:, None], d, -run.g)
            slope = torch.where(descent, slope, -(run.g * run.g).sum(dim=1))
        step = torch.where(
            run.kept == 0, (1 / d.norm(dim=1)).clamp(max=1.0), torch.ones_like(slope)
        )
        x_new, f_new, g_new, found, evals = _armijo(fg, run.x, run.f, d, slope, step, ids, max_ls)
        run.n_iter += 1
        run.n_fev += evals
        s, y = x_new - run.x, g_new - run.g
        sy = torch.linalg.vecdot(s, y)
        keep = found & (sy > CURVATURE * torch.linalg.vecdot(y, y))
        slot = it % history
        run.s_hist[:, slot] = torch.where(keep[:, None], s, 0.0)
        run.y_hist[:, slot] = torch.where(keep[:, None], y, 0.0)
        run.rho[:, slot] = torch.where(keep, 1 / sy, 0.0)
        run.kept += keep
        decrease = (run.f - f_new) / torch.maximum(run.f.abs(), f_new.abs()).clamp(min=1.0)
        run.x, run.f = x_new, f_new  # `_armijo` keeps x and f where no step was found
        run.g = torch.where(found[:, None], g_new, run.g)
        met = (run.g.abs().amax(dim=1) <= tol) | (found & (decrease <= ftol))
        stop = met | ~found
        if bool(stop.any()):
            _write_out(out, run, stop, met)
            run = run.keep_rows((~stop).nonzero().flatten())
    _write_out(out, run, torch.ones_like(run.f, dtype=torch.bool), None)
    return out


def _for_running(precondition: Preconditioner, ids: Tensor) -> Callable[[Tensor], Tensor]:
    """`v -> M v` for the running problems `ids` (v may stack several vectors per problem)."""
    return lambda v: precondition(v, ids.repeat(len(v) // len(ids)))


def _write_out(out: LbfgsResult, run: _Running, rows: Tensor, met: Tensor | None) -> None:
    """Copy the running problems `rows` (a mask) into the result; `met`: their convergence."""
    at = run.ids[rows]
    out.x[at], out.f[at] = run.x[rows], run.f[rows]
    out.n_iter[at], out.n_fev[at] = run.n_iter[rows], run.n_fev[rows]
    if met is not None:
        out.converged[at] = met[rows]


def _two_loop(run: _Running, it: int, h0: Callable[[Tensor], Tensor] | None) -> Tensor:
    """H_k g by the two-loop recursion over the stored pairs, newest first (empty and skipped
    slots have rho = 0 and change nothing); the initial matrix is gamma I or gamma M."""
    m = run.s_hist.shape[1]
    q = run.g.clone()
    slots = [(it - j) % m for j in range(1, min(it, m) + 1)]
    alphas = []
    for slot in slots:
        a = run.rho[:, slot] * torch.linalg.vecdot(run.s_hist[:, slot], q)
        q.sub_(run.y_hist[:, slot] * a[:, None])
        alphas.append(a)
    fresh = run.rho[:, slots[0]] != 0 if slots else None  # the last iteration kept its pair
    if fresh is None or not bool(fresh.any()):
        r = q if h0 is None else h0(q)
    else:
        # gamma = s.y / y.My of the newest pair, its My found with M q in one call
        y = run.y_hist[:, slots[0]]
        r, my = (q, y) if h0 is None else h0(torch.cat([q, y])).chunk(2)
        gamma = 1 / (run.rho[:, slots[0]] * torch.linalg.vecdot(y, my)).clamp(min=1e-300)
        run.gamma = torch.where(fresh, gamma, run.gamma)
    r.mul_(run.gamma[:, None])
    for slot, a in zip(reversed(slots), reversed(alphas)):
        b = run.rho[:, slot] * torch.linalg.vecdot(run.y_hist[:, slot], r)
        r.add_(run.s_hist[:, slot] * (a - b)[:, None])
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
    trial = torch.addcmul(x, step[:, None], d)
    f_new, g_new = fg(trial, idx)
    evals = torch.ones_like(f, dtype=torch.int64)
    found = f_new <= f + ARMIJO * step * slope
    if bool(found.all()):
        return trial, f_new, g_new, found, evals
    x_new = trial
    t = step.clone()
    for _ in range(1, max_ls):
        todo = (~found).nonzero().flatten()
        if todo.numel() == 0:
            break
        t[todo] *= 0.5
        trial = x[todo] + t[todo, None] * d[todo]
        f_t, g_t = fg(trial, idx[todo])
        evals[todo] += 1
        ok = f_t <= f[todo] + ARMIJO * t[todo] * slope[todo]
        done = todo[ok]
        x_new[done], f_new[done], g_new[done] = trial[ok], f_t[ok], g_t[ok]
        found[done] = True
    x_new[~found], f_new[~found] = x[~found], f[~found]
    return x_new, f_new, g_new, found, evals
