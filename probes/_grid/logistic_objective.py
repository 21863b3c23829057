"""scikit-learn's L2 logistic-regression objective for many probes, evaluated in row blocks.

`mean_i loss_i + ||W||^2 / (2 C n)`, intercept unpenalised; multinomial for >= 3 classes, the
sigmoid model for 2 (a softmax whose first class has logit 0 and is held there). Probes that
read the same feature block (`P / G` consecutive probes) share every GEMM: one
`[rows, D] @ [D, p K]` per block of rows. The rows are cut into fixed blocks of `ROW_BLOCK`
that the worker threads share (`workers.py`); the blocks' sums are added in a fixed order, so
results do not depend on the number of threads.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from jaxtyping import Float, Int
from torch import Tensor

from probes._grid.inputs import check_features
from probes._grid.onednn_matmul import matmul_nt
from probes._grid.workers import WorkerPool
from probes.errors import ProbeInputError

ROW_BLOCK = 4096  # rows per block of work on the CPU (a fixed cut, not a tuning of results)
GRAM_RIDGE = 1e-2  # measured on MiniLM word features: fewest iterations among 1e-6..1e-1


class LogisticObjective:
    """The penalised mean log-loss and its gradient for any subset of the probes."""

    def __init__(
        self,
        X: Float[Tensor, "group item dim"],
        y: Int[Tensor, "probe item"],
        C: float,
        num_classes: int | None,
        pool: WorkerPool,
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
        if int(y.min()) < 0:
            raise ProbeInputError(
                f"y: label {int(y.min())} is negative; class ids run 0..K-1. Drop the unlabelled"
                " items first (a -1 'no label' marker is not read as one)."
            )
        k = int(y.max()) + 1 if num_classes is None else num_classes
        if int(y.max()) >= k:
            raise ProbeInputError(
                f"y: labels must lie in 0..{k - 1}; got {int(y.min())}..{int(y.max())}."
            )
        self.X, self.y, self.k, self.d, self.pool = X, y, k, X.shape[2], pool
        self.per_group = y.shape[0] // X.shape[0]
        self.penalty = 1.0 / (C * X.shape[1])
        n = X.shape[1]
        step = ROW_BLOCK if X.device.type == "cpu" else n
        self.row_blocks = [(a, min(n, a + step)) for a in range(0, n, step)]
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

    def with_features(self, X: Float[Tensor, "group item dim"]) -> LogisticObjective:
        """The same probes on other features of the same shape (e.g. float64 for a polish)."""
        c = 1.0 / (self.penalty * X.shape[1]) if self.penalty else math.inf  # inf: no L2 term
        return LogisticObjective(X, self.y, c, self.k, self.pool)

    def _groups(self, idx: Tensor) -> list[tuple[int, Tensor]]:
        """(feature block, positions in `idx`) of the probes `idx`."""
        group_of = idx // self.per_group
        return [(g, (group_of == g).nonzero().flatten()) for g in group_of.unique().tolist()]

    def _linear_parts(
        self, theta: Tensor, idx: Tensor, groups: list[tuple[int, Tensor]]
    ) -> tuple[list[Tensor], list[Tensor]]:
        """Per entry of `groups`, its probes' stacked weights `[p K, D]` and biases `[p K]`
        (absent classes at -inf), from `theta` `[len(idx), K, D + 1]`."""
        d = self.d
        weights = [theta[at, :, :d].reshape(-1, d) for _, at in groups]
        biases = [(theta[at, :, d] + self.unseen[idx[at]]).reshape(-1) for _, at in groups]
        return weights, biases

    def fg(self, theta: Tensor, idx: Tensor) -> tuple[Tensor, Tensor]:
        """Objective and gradient of probes `idx` at flat parameters `theta` (`[K, D + 1]` each)."""
        n, d, k = self.X.shape[1], self.d, self.k
        theta = theta.view(-1, k, d + 1)
        groups = self._groups(idx)
        weights, biases = self._linear_parts(theta, idx, groups)
        targets = [self.y[idx[at]] for _, at in groups]

        def block(job: tuple[int, int]) -> tuple[Tensor, Tensor, Tensor]:
            # logits as [p K, rows] (W @ X^T): on the CPU this GEMM and the softmax over the
            # class axis are faster than [rows, p K] for a few probes of K ~ 17 classes
            j, r = job
            (a, b), x = self.row_blocks[r], self.X[groups[j][0]]
            rows = x[a:b]
            z = matmul_nt(weights[j], rows).add_(biases[j][:, None]).view(-1, k, b - a)
            logp = torch.log_softmax(z, dim=1)
            target = targets[j][:, None, a:b]  # [p, 1, rows]
            loss = -logp.gather(1, target).sum(dim=(1, 2))
            dz = logp.exp_().scatter_add_(1, target, torch.full_like(target, -1, dtype=z.dtype))
            dz = dz.view(-1, b - a)
            return loss, matmul_nt(dz, rows.T), dz.sum(dim=1)

        jobs = [(j, r) for j in range(len(groups)) for r in range(len(self.row_blocks))]
        parts = iter(self.pool.map(block, jobs))
        f = torch.empty(theta.shape[0], dtype=theta.dtype, device=theta.device)
        grad = torch.empty_like(theta)
        for j, (_, at) in enumerate(groups):
            loss, gw, gb = next(parts)
            for _ in range(1, len(self.row_blocks)):
                more = next(parts)
                loss, gw, gb = loss + more[0], gw + more[1], gb + more[2]
            w = weights[j].view(len(at), k, d)
            grad[at, :, :d] = gw.view(len(at), k, d) / n + self.penalty * w
            grad[at, :, d] = gb.view(len(at), k) / n
            f[at] = loss / n + 0.5 * self.penalty * (w * w).sum(dim=(1, 2))
        grad *= self.free[idx][..., None]
        return f, grad.view(theta.shape[0], -1)

    def preconditioner(
        self,
        theta: Tensor | None = None,
        idx: Tensor | None = None,
        blocks: list[int] | None = None,
    ) -> Callable[[Tensor, Tensor], Tensor]:
        """`v -> M v` with M the inverse of each feature block's Gram matrix `[X, 1]^T [X, 1] / n`
        plus a ridge (`GRAM_RIDGE` x its mean diagonal, at least the L2 penalty), applied to every
        class row `[K, D + 1]`. Given the probes `idx` at flat parameters `theta`, each row of a
        block's Gram matrix is weighted by the softmax's curvature there (`sum_k p_k (1 - p_k)`,
        averaged over the block's probes), which brings M nearer the inverse Hessian; M is then
        built only for the blocks those probes read. Without them, M is the plain Gram inverse of
        the feature blocks `blocks` (default: all) and the identity for the others."""
        d = self.d
        if theta is None or idx is None:
            wanted = list(range(self.X.shape[0])) if blocks is None else blocks
            curvature = None
        else:
            groups = self._groups(idx)
            wanted = [g for g, _ in groups]
            curvature = self._row_curvature(theta.view(-1, self.k, d + 1), idx, groups)
        gram = self._grams(wanted, curvature, len(self.row_blocks))
        ridge = (GRAM_RIDGE * gram.diagonal(dim1=1, dim2=2).mean(dim=1)).clamp(min=self.penalty)
        gram += ridge[:, None, None] * torch.eye(d + 1, dtype=gram.dtype, device=gram.device)
        inverse = torch.cholesky_inverse(torch.linalg.cholesky(gram)).to(self.X.dtype)
        at_block = {g: j for j, g in enumerate(wanted)}

        def apply(v: Tensor, idx: Tensor) -> Tensor:
            rows = v.view(-1, self.k, d + 1)
            out = torch.empty_like(rows)
            for group, at in self._groups(idx):
                if group in at_block:
                    out[at] = rows[at] @ inverse[at_block[group]]
                else:
                    out[at] = rows[at]
            return out.view(v.shape)

        return apply

    def condition_estimate(self) -> Float[Tensor, " group"]:
        """Per feature block, the condition number of `G + 4 penalty I`, G the Gram matrix
        `[X, 1]^T [X, 1] / m` of its first m >= 4 (D + 1) rows (whole row blocks): the Hessian's
        conditioning at a softmax curvature of 1/4, from a fraction of one Gram matrix's cost.
        Isotropic features give single figures; word features of a transformer, whose
        layer-normalised rows span fewer than D + 1 directions, give 10^4 and more."""
        step = self.row_blocks[0][1] - self.row_blocks[0][0]
        blocks = min(len(self.row_blocks), -(-4 * (self.d + 1) // step))
        gram = self._grams(list(range(self.X.shape[0])), None, blocks)
        eig = torch.linalg.eigvalsh(gram)
        floor = 4 * self.penalty
        return (eig[:, -1] + floor) / (eig[:, 0].clamp(min=0) + floor)

    def _grams(
        self,
        wanted: list[int],
        curvature: Callable[[int, int], Tensor] | None,
        n_blocks: int,
    ) -> Float[Tensor, "group dim1 dim1"]:
        """`[X, 1]^T diag(w) [X, 1] / rows` of the feature blocks `wanted`, over their first
        `n_blocks` row blocks, float64; `w` from `curvature(j, r)`, or ones."""
        d = self.d

        def block(job: tuple[int, int]) -> Tensor:
            # [X, 1]^T diag(w) [X, 1] of a row block from X^T X and X's column sums (faster than
            # a copy of the rows with a column of ones)
            j, r = job
            a, b = self.row_blocks[r]
            rows = self.X[wanted[j], a:b]
            out = torch.empty(d + 1, d + 1, dtype=torch.float64, device=rows.device)
            if curvature is None:
                out[:d, :d] = rows.T @ rows
                out[d, :d] = out[:d, d] = rows.sum(dim=0, dtype=torch.float64)
                out[d, d] = b - a
            else:
                w = curvature(j, r)
                scaled = rows * w.sqrt()[:, None]
                out[:d, :d] = scaled.T @ scaled
                out[d, :d] = out[:d, d] = (w @ rows).double()
                out[d, d] = w.sum(dtype=torch.float64)
            return out

        jobs = [(j, r) for j in range(len(wanted)) for r in range(n_blocks)]
        parts = iter(self.pool.map(block, jobs))
        grams = []
        for _ in wanted:
            gram = next(parts)
            for _ in range(1, n_blocks):
                gram = gram + next(parts)
            grams.append(gram)
        return torch.stack(grams) / self.row_blocks[n_blocks - 1][1]

    def _row_curvature(
        self, theta: Tensor, idx: Tensor, groups: list[tuple[int, Tensor]]
    ) -> Callable[[int, int], Tensor]:
        """`(j, r) -> w`: for row block r of the j-th block in `groups`, each row's softmax
        curvature `sum_k p_k (1 - p_k)` at `theta`, averaged over the probes reading the block."""
        k = self.k
        weights, biases = self._linear_parts(theta, idx, groups)

        def curvature(j: int, r: int) -> Tensor:
            a, b = self.row_blocks[r]
            z = matmul_nt(weights[j], self.X[groups[j][0], a:b]).add_(biases[j][:, None])
            p = torch.softmax(z.view(-1, k, b - a), dim=1)
            return (p - p * p).sum(dim=1).mean(dim=0)

        return curvature
