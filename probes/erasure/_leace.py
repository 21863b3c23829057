"""Concept erasure: `AffineEraser` (one low-rank affine map per site) and LEACE.

An eraser maps `x -> x - (x - mean) @ right^T @ left^T` at each site; `left @ right` has rank r
(the erased subspace), zero-padded to the largest rank of all sites. LEACE (Belrose et al.
2023, Theorem 4.3) is the least-squares edit after which no linear classifier can tell the
concept apart: with `W = (Sigma_XX^{1/2})^+` (whitening), `P` the orthogonal projection onto the
column space of `W Sigma_XZ` (Z the one-hot concept), `r(x) = x - W^+ P W (x - E[x])`; here
`left = W^+ U`, `right = U^T W` with U an orthonormal basis of that column space. Statistics are
the plain sample ones (no shrinkage), computed in float64, so the erased features' cross-
covariance with the concept is zero up to rounding.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from jaxtyping import Float, Int
from torch import Tensor

from lingprobe.feature_set import FeatureSet
from probes._grid.inputs import check_features
from probes._grid.site_reader import in_memory
from probes._grid.streams import keyed_generator
from probes.errors import ProbeInputError


@dataclass(frozen=True)
class AffineEraser:
    """Per site `x -> x - (x - mean) @ right^T @ left^T`; `ranks[s]` columns used at site s.

    `method` names how it was made ("leace", "inlp", "random"). Call it on `[item, site,
    width]` features (width a multiple of dim: span pairs are erased word by word), or take one
    site's map with `site(s)` to edit a model's hidden states.
    """

    left: Float[Tensor, "site dim rank"]
    right: Float[Tensor, "site rank dim"]
    mean: Float[Tensor, "site dim"]
    ranks: Int[Tensor, " site"]
    method: str

    @property
    def dim(self) -> int:
        """The width of the vectors it erases."""
        return int(self.mean.shape[1])

    @property
    def n_sites(self) -> int:
        """Sites it holds a map for."""
        return int(self.mean.shape[0])

    def __call__(
        self, feats: Float[Tensor, "item site width"] | FeatureSet
    ) -> Float[Tensor, "item site width"]:
        """The erased features, in the features' dtype and device (a `FeatureSet`: read whole,
        float32)."""
        feats = in_memory(feats)
        n, sites, width = feats.shape
        if sites != self.n_sites or width % self.dim:
            raise ProbeInputError(
                f"feats: shape {tuple(feats.shape)}; this eraser needs {self.n_sites} sites and"
                f" a width that is a multiple of {self.dim}."
            )
        x = feats.reshape(n, sites, width // self.dim, self.dim)
        left, right, mean = (t.to(feats.device, feats.dtype) for t in self._tensors())
        coords = torch.einsum("nsgd,srd->nsgr", x - mean[None, :, None], right)
        return (x - torch.einsum("nsgr,sdr->nsgd", coords, left)).reshape(n, sites, width)

    def site(self, index: int) -> Callable[[Tensor], Tensor]:
        """The map of one site on vectors `[..., dim]` (any leading axes, dtype, device)."""
        left, right, mean = (t[index] for t in self._tensors())

        def erase(hidden: Tensor) -> Tensor:
            lt, rt, mu = (t.to(hidden.device, hidden.dtype) for t in (left, right, mean))
            return hidden - ((hidden - mu) @ rt.T) @ lt.T

        return erase

    def projection(self) -> Float[Tensor, "site dim dim"]:
        """The linear part `I - left @ right` of every site."""
        eye = torch.eye(self.dim, dtype=self.left.dtype)
        return eye - self.left @ self.right

    def _tensors(self) -> tuple[Tensor, Tensor, Tensor]:
        return self.left, self.right, self.mean


def fit_leace(
    feats: Float[Tensor, "item site dim"] | FeatureSet,
    concept: Int[Tensor, " item"],
    *,
    num_classes: int | None = None,
    rtol: float = 1e-8,
) -> AffineEraser:
    """LEACE erasers of a categorical concept, one per site, fitted on all of `feats`' items.

    Whitening drops eigenvalues below `torch.linalg.pinv`'s cutoff; directions of `W Sigma_XZ`
    whose singular value is below `rtol` times the largest are numerical zeros and kept.
    A `FeatureSet` is read one site at a time (each site once).
    """
    z = _one_hot(concept, feats.shape[0], num_classes)
    n, sites, d = feats.shape
    zc = z - z.mean(0)
    if isinstance(feats, Tensor):
        check_features(feats)
        mean = feats.double().mean(0)
    else:
        mean = torch.empty(sites, d, dtype=torch.float64)  # each site's, from its one read
    sxx = torch.empty(sites, d, d, dtype=torch.float64)
    sxz = torch.empty(sites, d, z.shape[1], dtype=torch.float64)
    for s in range(sites):  # one site at a time: float64 copies of one [item, dim] slice
        x = in_memory(feats, [s])[:, 0].double()
        if isinstance(feats, FeatureSet):
            mean[s] = x.mean(0)
        xc = x - mean[s]
        sxx[s] = xc.T @ xc / (n - 1)
        sxz[s] = xc.T @ zc / (n - 1)
    sxx = (sxx + sxx.transpose(1, 2)) / 2
    eigval, eigvec = torch.linalg.eigh(sxx)
    cutoff = eigval[:, -1:] * d * torch.finfo(torch.float64).eps
    keep = eigval > cutoff
    safe = torch.where(keep, eigval, 1.0)
    root = torch.where(keep, safe.sqrt(), 0.0)
    inv_root = torch.where(keep, safe.rsqrt(), 0.0)
    whiten = (eigvec * inv_root[:, None, :]) @ eigvec.transpose(1, 2)
    unwhiten = (eigvec * root[:, None, :]) @ eigvec.transpose(1, 2)
    u, sing, _ = torch.linalg.svd(whiten @ sxz, full_matrices=False)
    used = sing > rtol * sing[:, :1].clamp(min=1e-300)
    return _from_bases(u, used, unwhiten, whiten, mean, "leace")


def random_eraser(like: AffineEraser, seed: int = 0) -> AffineEraser:
    """The control: per site, the orthogonal projection off a random subspace of the same rank
    as `like`'s (uniform on the Grassmannian: QR of a Gaussian matrix), no mean shift."""
    gen = keyed_generator("random-eraser", seed)
    d, width = like.dim, like.left.shape[2]
    gauss = torch.randn(like.n_sites, d, max(width, 1), generator=gen, dtype=torch.float64)
    basis, _ = torch.linalg.qr(gauss)
    used = torch.arange(basis.shape[2])[None, :] < like.ranks[:, None]
    eye = torch.eye(d, dtype=torch.float64).expand(like.n_sites, d, d)
    zero = torch.zeros(like.n_sites, d, dtype=torch.float64)
    return _from_bases(basis, used, eye, eye, zero, "random")


def orthogonal_eraser(
    basis: Float[Tensor, "site dim rank"], used: Tensor, method: str
) -> AffineEraser:
    """The orthogonal projection off the span of each site's used basis columns (no shift)."""
    sites, d = basis.shape[:2]
    eye = torch.eye(d, dtype=basis.dtype).expand(sites, d, d)
    return _from_bases(basis, used, eye, eye, torch.zeros(sites, d, dtype=basis.dtype), method)


def _from_bases(
    basis: Float[Tensor, "site dim col"],
    used: Tensor,
    unwhiten: Float[Tensor, "site dim dim"],
    whiten: Float[Tensor, "site dim dim"],
    mean: Float[Tensor, "site dim"],
    method: str,
) -> AffineEraser:
    """`left = unwhiten @ U`, `right = U^T @ whiten` with U the used columns, packed first."""
    ranks = used.sum(1)
    width = int(ranks.max()) if ranks.numel() else 0
    order = (~used).int().argsort(dim=1, stable=True)[:, :width]
    cols = basis.gather(2, order[:, None, :].expand(-1, basis.shape[1], -1))
    cols = cols * (torch.arange(width)[None, :] < ranks[:, None])[:, None, :]
    left = unwhiten @ cols
    right = cols.transpose(1, 2) @ whiten
    return AffineEraser(left, right, mean, ranks, method)


def _one_hot(
    concept: Int[Tensor, " item"], n_items: int, num_classes: int | None
) -> Float[Tensor, "item class"]:
    concept = torch.as_tensor(concept)
    if concept.shape != (n_items,) or concept.is_floating_point():
        raise ProbeInputError(
            f"concept: shape {tuple(concept.shape)} {concept.dtype}; give one integer class id"
            f" per item ({n_items} items)."
        )
    k = int(concept.max()) + 1 if num_classes is None else num_classes
    if int(concept.min()) < 0 or int(concept.max()) >= k:
        raise ProbeInputError(f"concept: class ids must lie in 0..{k - 1}.")
    if n_items < 2:
        raise ProbeInputError("concept: at least two items are needed to estimate covariances.")
    return torch.nn.functional.one_hot(concept.long().cpu(), k).double()
