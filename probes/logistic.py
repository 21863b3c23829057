"""The batched L-BFGS logistic-regression fitter: full-batch L2 logistic regression of many
probes at once, equal to scikit-learn's.

Each probe minimises scikit-learn's objective (`LogisticRegression(C=C)`, lbfgs):
`mean_i loss_i + ||W||^2 / (2 C n)`, intercept unpenalised; multinomial for >= 3 classes, the
sigmoid model for 2 (stored as a softmax whose first class has logit 0, which is the same
model). Classes absent from a probe's labels get probability 0, as sklearn, which never sees
them. The probes that share features (task and control labels of one site) are one GEMM per
evaluation: `X` holds one feature block per group of `P / G` consecutive probes.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, fields
from functools import partial
from typing import Any, Literal

import numpy as np
import torch
from jaxtyping import Bool, Float, Int
from torch import Tensor

from lingprobe.feature_set import FeatureSet
from probes._grid.inputs import resolve_device
from probes._grid.lbfgs import LbfgsResult, minimize_lbfgs
from probes._grid.logistic_feature_set import fit_logistic_feature_set
from probes._grid.logistic_objective import LogisticObjective
from probes._grid.memory_budget import checked_memory
from probes._grid.workers import resolve_threads, worker_pool
from probes.errors import LogisticConvergenceWarning, ProbeInputError
from probes.logistic_l1 import minimize_l1

ILL_CONDITIONED = 1e3  # condition estimate above which a cold fit starts preconditioned: isotropic
# features give < 20, MiniLM word features >= 1.4e4 (benchmarks/HISTORY.md)


@dataclass
class LogisticProbes:
    """Fitted probes. `coef_ [P, K, D]`, `intercept_ [P, K]`; `classes_ [P, K]`: the classes
    each probe saw. Binary probes keep sklearn's `coef_[0]` in the row of their second class
    and zeros in the first; `sklearn_params(p)` gives sklearn's exact layout. `n_fev_`: objective
    and gradient evaluations per probe (each two GEMMs over its rows)."""

    coef_: Float[Tensor, "probe class dim"]
    intercept_: Float[Tensor, "probe class"]
    classes_: Bool[Tensor, "probe class"]
    n_iter_: Int[Tensor, " probe"]
    n_fev_: Int[Tensor, " probe"]
    converged_: Bool[Tensor, " probe"]
    objective_: Float[Tensor, " probe"]

    def decision_function(
        self, X: Float[Tensor, "group item dim"]
    ) -> Float[Tensor, "probe item class"]:
        """Logits of every probe on its group's rows; -inf for classes a probe never saw."""
        n_probes, k, d = self.coef_.shape
        groups = X.shape[0]
        w = self.coef_.to(X.device, X.dtype).view(groups, -1, k, d)  # [G, p, K, D]
        w = w.permute(0, 3, 1, 2).reshape(groups, d, -1)
        logits = torch.bmm(X, w).view(groups, X.shape[1], -1, k).transpose(1, 2)
        logits = logits.reshape(n_probes, X.shape[1], k)
        bias = self.intercept_.to(X.device, X.dtype)
        bias = bias.masked_fill(~self.classes_.to(X.device), -torch.inf)
        return logits + bias[:, None, :]

    def predict_proba(
        self, X: Float[Tensor, "group item dim"]
    ) -> Float[Tensor, "probe item class"]:
        """Class probabilities `[P, item, K]`."""
        return torch.softmax(self.decision_function(X), dim=-1)

    def predict(self, X: Float[Tensor, "group item dim"]) -> Int[Tensor, "probe item"]:
        """Most probable class per probe and item."""
        return self.decision_function(X).argmax(dim=-1)

    def score(
        self, X: Float[Tensor, "group item dim"], y: Int[Tensor, "probe item"]
    ) -> Float[Tensor, " probe"]:
        """Accuracy per probe (sklearn's `score`)."""
        return (self.predict(X) == y.to(X.device)).double().mean(dim=1)

    def select(self, probes: Int[Tensor, " chosen"]) -> LogisticProbes:
        """The fitted probes `probes` (e.g. to warm-start other probes from them)."""
        return LogisticProbes(*(getattr(self, f.name)[probes] for f in fields(self)))

    def sklearn_params(self, probe: int) -> tuple[np.ndarray, np.ndarray]:
        """`(coef_, intercept_)` of one probe as sklearn stores them (seen classes only)."""
        seen = self.classes_[probe].nonzero().flatten()
        if seen.numel() == 2:
            return self.coef_[probe, seen[1:]].numpy(), self.intercept_[probe, seen[1:]].numpy()
        return self.coef_[probe, seen].numpy(), self.intercept_[probe, seen].numpy()


def fit_logistic_regression(
    X: Float[Tensor, "group item dim"] | FeatureSet,
    y: Int[Tensor, "probe item"],
    C: float = 1.0,
    *,
    num_classes: int | None = None,
    tol: float = 1e-4,
    max_iter: int = 100,
    init: LogisticProbes | None = None,
    polish: bool = False,
    precondition: bool = True,
    device: torch.device | str | None = None,
    threads: int | None = None,
    memory: int | str | None = None,
    penalty: Literal["l2", "l1"] = "l2",
) -> LogisticProbes:
    """Fit `P` L2 logistic regressions at once; probe p reads `X[p // (P // G)]`.

    `X` is `[G, item, dim]` with G dividing P (G = P: one feature block per probe). The
    computation runs in X's dtype (float64 for sklearn-level agreement at tight `tol`, float32
    for speed; `polish=True` then finishes in float64 from the float32 solution). `tol` and
    `max_iter` mean what they mean in sklearn's lbfgs (defaults equal). `init` warm-starts from
    other fitted probes of the same shape. `precondition=True` lets the probes still running at
    L-BFGS iteration `REFRESH_AT` start each step from the inverse Gram matrix of their features
    (`[X, 1]`, each row weighted by the softmax's curvature at the iterate, which brings M nearer
    the Hessian; ridge `GRAM_RIDGE` x its mean diagonal) instead of a scaled identity: the same
    objective, optimum and stopping rule, reached in fewer iterations on ill-conditioned
    features such as a transformer's. The `[D+1, D+1]` Gram matrix per feature block costs
    about as much as a few evaluations of the objective, so probes that converge within
    `REFRESH_AT` iterations never build it (a warm start builds it at `init`). `device` as in
    `fit_probes`; results on the CPU.
    `threads`: CPU worker threads (default `torch.get_num_threads()`), each computing with one
    intra-op thread on row blocks of the features and pinned one per CPU when there are as
    many as CPUs, which keeps a fit fast beside other busy processes (see `probes._grid.workers`);
    results do not depend on it.
    `X` may be a `FeatureSet` `[item, site, dim]` on disk: its sites are the feature blocks
    (G = sites), read by groups of sites that fit `memory` (bytes or a size such as `"4GiB"`;
    None: every site at once), the next group read while one is fitted; each probe's L-BFGS
    runs on its site's features only, so the results equal the fit of the same features as a
    tensor `[site, item, dim]`. `memory` must hold one site's float32 features (float64 too
    with `polish=True`); it does not change the fit of a tensor. On a CUDA device each group
    is read from disk into pinned host memory and copied to the device without blocking while
    the group before is fitted, and held there; elsewhere it is held on the host.
    `penalty="l1"`: sklearn's `LogisticRegression(penalty="l1", C=C, solver="saga")` objective
    instead, `mean_i loss_i + ||W||_1 / (C n)`, fitted by FISTA (`probes.logistic_l1`): most
    coefficients come out exactly 0, so a probe names the few features that carry its labels.
    `tol` then bounds its gradient mapping; it needs more iterations than L-BFGS (give
    `max_iter` in the thousands), and `precondition` does not apply.

    Examples:
        >>> import torch
        >>> from sklearn.linear_model import LogisticRegression
        >>> from probes import fit_logistic_regression
        >>> gen = torch.Generator().manual_seed(0)
        >>> X = torch.randn(1, 40, 3, generator=gen, dtype=torch.float64)  # [group, item, dim]
        >>> noisy = X[0, :, 0] + 0.5 * torch.randn(40, generator=gen, dtype=torch.float64)
        >>> y = (noisy > 0).long()[None]  # [probe, item]
        >>> fitted = fit_logistic_regression(X, y, C=1.0)
        >>> ours = fitted.predict_proba(X)[0].numpy()
        >>> theirs = LogisticRegression(C=1.0).fit(X[0].numpy(), y[0].numpy()).predict_proba(X[0])
        >>> bool(abs(ours - theirs).max() < 1e-3)
        True
    """
    if not isinstance(X, Tensor | FeatureSet) or not isinstance(y, Tensor):
        raise ProbeInputError(
            f"fit_logistic_regression: X is {type(X).__name__} and y is {type(y).__name__}; give"
            " torch tensors, X [group, item, dim] floats (or a FeatureSet) and y [probe, item]"
            " class ids"
        )
    if penalty not in ("l2", "l1"):
        raise ProbeInputError(f"penalty={penalty!r}: choose 'l2' (default) or 'l1'")
    if penalty == "l1" and not C > 0:  # the smooth part's check sees C = inf
        raise ProbeInputError(f"C={C}: the inverse regularisation strength must be > 0.")
    options: dict[str, Any] = dict(
        tol=tol, max_iter=max_iter, polish=polish, precondition=precondition, penalty=penalty
    )
    if isinstance(X, FeatureSet):  # read from disk by groups of sites under `memory`
        fitted = fit_logistic_feature_set(
            X,
            y,
            C,
            num_classes,
            init,
            memory,
            polish,
            partial(_fit, device=device, threads=threads, **options),
            resolve_device(device, None),
        )
    else:
        checked_memory(memory, "fit_logistic_regression: memory")
        fitted = _fit(X, y, C, num_classes, init, device=device, threads=threads, **options)
    if not bool(fitted.converged_.all()):
        warnings.warn(
            f"fit_logistic_regression: {int((~fitted.converged_).sum())} of"
            f" {fitted.converged_.numel()} probes did not reach tol={tol} in max_iter={max_iter};"
            " raise max_iter or scale the features.",
            LogisticConvergenceWarning,
            stacklevel=2,
        )
    return fitted


def _fit(
    X: Float[Tensor, "group item dim"],
    y: Int[Tensor, "probe item"],
    C: float,
    num_classes: int | None,
    init: LogisticProbes | None,
    *,
    tol: float,
    max_iter: int,
    polish: bool,
    precondition: bool,
    device: torch.device | str | None,
    threads: int | None,
    penalty: Literal["l2", "l1"] = "l2",
) -> LogisticProbes:
    """`fit_logistic_regression` of a tensor, without the convergence warning."""
    dev = resolve_device(device, X)
    workers = resolve_threads(threads)  # checked on every device, used on the CPU
    with worker_pool(workers if dev.type == "cpu" else 1) as pool:
        smooth_c = C if penalty == "l2" else math.inf  # L1: the loss alone is smooth
        problem = LogisticObjective(X.to(dev), y.to(dev), smooth_c, num_classes, pool)
        l1 = 0.0 if penalty == "l2" else 1.0 / (C * X.shape[1])
        res = _minimize(problem, X, init, tol, max_iter, polish, precondition, l1)
    p, k, d = problem.y.shape[0], problem.k, problem.d
    theta = res.x.view(p, k, d + 1)
    bias = theta[..., d]
    multi = problem.present.sum(dim=1) > 2
    centre = (bias * problem.present).sum(1) / problem.present.sum(1)
    bias = torch.where(multi[:, None] & problem.present, bias - centre[:, None], bias)
    return LogisticProbes(
        coef_=theta[..., :d].cpu().contiguous(),
        intercept_=(bias * problem.present).cpu(),
        classes_=problem.present.cpu(),
        n_iter_=res.n_iter.cpu(),
        n_fev_=res.n_fev.cpu(),
        converged_=res.converged.cpu(),
        objective_=res.f.cpu(),
    )


def _minimize(
    problem: LogisticObjective,
    X: Tensor,
    init: LogisticProbes | None,
    tol: float,
    max_iter: int,
    polish: bool,
    precondition: bool,
    l1: float = 0.0,
) -> LbfgsResult:
    """L-BFGS (FISTA with an `l1` weight) from zeros (or `init`), then the float64 polish when
    asked."""
    p, k, d = problem.y.shape[0], problem.k, problem.d
    dev = problem.X.device
    theta = torch.zeros(p, k, d + 1, dtype=X.dtype, device=dev)  # [coef | intercept] per class
    if init is not None:
        theta[..., :d] = init.coef_.to(dev, X.dtype)
        theta[..., d] = init.intercept_.to(dev, X.dtype)
        theta *= problem.free[..., None]

    def solve(on: LogisticObjective, start: Tensor, warm: bool) -> LbfgsResult:
        if l1 > 0:
            return minimize_l1(on, start, l1, tol=tol, max_iter=max_iter)
        return _lbfgs(on, start, warm, tol, max_iter, precondition)

    res = solve(problem, theta.view(p, -1), init is not None)
    if polish and X.dtype != torch.float64:
        first = res
        res = solve(problem.with_features(X.to(dev, torch.float64)), res.x.double(), True)
        res.n_iter += first.n_iter
        res.n_fev += first.n_fev
    return res


def _lbfgs(
    problem: LogisticObjective,
    theta: Tensor,
    warm: bool,
    tol: float,
    max_iter: int,
    precondition: bool,
) -> LbfgsResult:
    """Batched L-BFGS on `problem` from `theta`. Preconditioned: at iteration `REFRESH_AT`, M
    from the features' Gram matrix with each row weighted by the softmax's curvature at the
    iterate, for the problems still running (those that converge sooner never pay for it).
    Before it, a warm start is weighted at `theta`; a cold start uses the plain Gram matrix
    where a cheap estimate (`LogisticObjective.condition_estimate`, about a quarter of one
    Gram matrix) finds a feature block ill-conditioned, and plain L-BFGS where it is not; each
    block decides alone, so a fit of some sites gives them the numbers of a fit of all."""
    if not precondition:
        return minimize_lbfgs(problem.fg, theta, tol=tol, max_iter=max_iter)
    pre = None
    if warm:
        pre = problem.preconditioner(theta, torch.arange(theta.shape[0], device=theta.device))
    else:
        ill = (problem.condition_estimate() > ILL_CONDITIONED).nonzero().flatten().tolist()
        pre = problem.preconditioner(blocks=ill) if ill else None
    return minimize_lbfgs(
        problem.fg,
        theta,
        tol=tol,
        max_iter=max_iter,
        precondition=pre,
        refresh=problem.preconditioner,
    )
