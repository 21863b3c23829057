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

import warnings
from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np
import torch
from jaxtyping import Bool, Float, Int
from torch import Tensor

from probes.errors import LogisticConvergenceWarning, ProbeInputError
from probes.inputs import check_features, resolve_device
from probes.lbfgs import minimize_lbfgs


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
    X: Float[Tensor, "group item dim"],
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
) -> LogisticProbes:
    """Fit `P` L2 logistic regressions at once; probe p reads `X[p // (P // G)]`.

    `X` is `[G, item, dim]` with G dividing P (G = P: one feature block per probe). The
    computation runs in X's dtype (float64 for sklearn-level agreement at tight `tol`, float32
    for speed; `polish=True` then finishes in float64 from the float32 solution). `tol` and
    `max_iter` mean what they mean in sklearn's lbfgs (defaults equal). `init` warm-starts from
    other fitted probes of the same shape. `precondition=True` starts each L-BFGS step from the
    inverse Gram matrix of the probe's features (`[X, 1]`, ridge `GRAM_RIDGE` x its mean diagonal)
    instead of a scaled identity: the same objective, optimum and stopping rule, reached in
    fewer iterations on ill-conditioned features such as a transformer's (one `[D+1, D+1]` Gram
    matrix per feature block, computed once). `device` as in `fit_probes`; results on the CPU.
    """
    dev = resolve_device(device, X)
    problem = _Objective(X.to(dev), y.to(dev), C, num_classes)
    p, k, d = problem.y.shape[0], problem.k, problem.d
    theta = torch.zeros(p, k, d + 1, dtype=X.dtype, device=dev)  # [coef | intercept] per class
    if init is not None:
        theta[..., :d] = init.coef_.to(dev, X.dtype)
        theta[..., d] = init.intercept_.to(dev, X.dtype)
        theta *= problem.free[..., None]
    pre = problem.preconditioner() if precondition else None
    res = minimize_lbfgs(
        problem.fg, theta.view(p, -1), tol=tol, max_iter=max_iter, precondition=pre
    )
    if polish and X.dtype != torch.float64:
        fine = _Objective(X.to(dev, torch.float64), problem.y, C, k)
        first = res
        pre = fine.preconditioner() if precondition else None
        res = minimize_lbfgs(fine.fg, res.x.double(), tol=tol, max_iter=max_iter, precondition=pre)
        res.n_iter += first.n_iter
        res.n_fev += first.n_fev
    if not bool(res.converged.all()):
        warnings.warn(
            f"fit_logistic_regression: {int((~res.converged).sum())} of {p} probes did not reach"
            f" tol={tol} in max_iter={max_iter}; raise max_iter or scale the features.",
            LogisticConvergenceWarning,
            stacklevel=2,
        )
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


GRAM_RIDGE = 1e-2  # measured on MiniLM word features: fewest iterations among 1e-6..1e-1


class _Objective:
    """sklearn's penalised mean log-loss and its gradient for a subset of the probes."""

    def __init__(
        self,
        X: Float[Tensor, "group item dim"],
        y: Int[Tensor, "probe item"],
        C: float,
        num_classes: int | None,
    ) -> None:
        check_features(X, "X")
        if y.ndim != 2 or y.is_floating_point() or y.shape[1] != X.shape[1]:
            raise ProbeInputError(
                f"y: shape {tuple(y.shape)} {y.dtype}; give integer class ids [probe, item]"
                f" with item = X.shape[1] = {X.shape[1]}."
            )
        if y.shape[0] % X.shape[0]:
            raise ProbeInputError(
                f"X has {X.shape[0]} feature blocks for {y.shape[0]} probes; give one block per"
                " probe or per group of P/G consecutive probes (G must divide P)."
            )
        if C <= 0:
            raise ProbeInputError(f"C={C}: the inverse regularisation strength must be > 0.")
        k = int(y.max()) + 1 if num_classes is None else num_classes
        if int(y.min()) < 0 or int(y.max()) >= k:
            raise ProbeInputError(
                f"y: labels must lie in 0..{k - 1}; got {int(y.min())}..{int(y.max())}."
            )
        self.X, self.y, self.k, self.d = X, y, k, X.shape[2]
        self.per_group = y.shape[0] // X.shape[0]
        self.penalty = 1.0 / (C * X.shape[1])
        offsets = torch.arange(y.shape[0], device=y.device)[:, None] * k
        counts = torch.bincount((offsets + y).flatten(), minlength=y.shape[0] * k)
        self.present = counts.view(-1, k) > 0
        n_seen = self.present.sum(dim=1)
        if bool((n_seen < 2).any()):
            bad = int((n_seen < 2).nonzero()[0])
            raise ProbeInputError(f"y[{bad}] holds a single class; a classifier needs two.")
        first = self.present.int().argmax(dim=1)
        binary_fixed = (n_seen == 2)[:, None] & (torch.arange(k, device=y.device) == first[:, None])
        self.free = self.present & ~binary_fixed
        self.unseen = torch.where(self.present, 0.0, -torch.inf).to(X.dtype)

    def preconditioner(self) -> Callable[[Tensor, Tensor], Tensor]:
        """`v -> M v` with M the inverse of each block's Gram matrix `[X, 1]^T [X, 1] / n` plus a
        ridge, applied to every class row of the probes' parameters `[K, D + 1]`."""
        groups, n, d = self.X.shape
        ones = torch.ones(groups, n, 1, dtype=self.X.dtype, device=self.X.device)
        xt = torch.cat([self.X, ones], dim=2)
        gram = (xt.transpose(1, 2) @ xt).double() / n  # [G, D+1, D+1]
        ridge = GRAM_RIDGE * gram.diagonal(dim1=1, dim2=2).mean(dim=1)
        gram += ridge[:, None, None] * torch.eye(d + 1, dtype=gram.dtype, device=gram.device)
        inverse = torch.cholesky_inverse(torch.linalg.cholesky(gram)).to(self.X.dtype)

        def apply(v: Tensor, idx: Tensor) -> Tensor:
            rows = v.view(-1, self.k, d + 1)
            out = torch.empty_like(rows)
            group_of = idx // self.per_group
            for group in group_of.unique().tolist():
                at = (group_of == group).nonzero().flatten()
                out[at] = rows[at] @ inverse[group]
            return out.view(v.shape)

        return apply

    def fg(self, theta: Tensor, idx: Tensor) -> tuple[Tensor, Tensor]:
        """Objective and gradient of probes `idx` at flat parameters `theta` (`[K, D + 1]` each).

        Class-major GEMMs (`W @ X^T`, then `dZ @ X`): the faster orientation for few outputs.
        """
        n, d, k = self.X.shape[1], self.d, self.k
        theta = theta.view(-1, k, d + 1)
        f = torch.empty(theta.shape[0], dtype=theta.dtype, device=theta.device)
        grad = torch.empty_like(theta)
        group_of = idx // self.per_group
        for group in group_of.unique().tolist():
            at = (group_of == group).nonzero().flatten()
            probes, w = idx[at], theta[at, :, :d]
            x = self.X[group]
            z = (w.reshape(-1, d) @ x.T).view(len(at), k, n)
            z += (theta[at, :, d] + self.unseen[probes])[..., None]
            logp = torch.log_softmax(z, dim=1)
            target = self.y[probes][:, None, :]
            loss = -logp.gather(1, target).sum(dim=(1, 2)) / n
            dz = logp.exp_().scatter_add_(1, target, torch.full_like(target, -1, dtype=z.dtype))
            gw = (dz.view(-1, n) @ x).view(len(at), k, d)  # scaled by 1/n here, not dz
            grad[at, :, :d] = gw / n + self.penalty * w
            grad[at, :, d] = dz.sum(dim=2) / n
            f[at] = loss + 0.5 * self.penalty * (w * w).sum(dim=(1, 2))
        grad *= self.free[idx][..., None]
        return f, grad.view(theta.shape[0], -1)
