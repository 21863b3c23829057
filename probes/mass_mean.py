"""Mass-mean probes (Marks & Tegmark 2023, "The Geometry of Truth"): closed-form class means.

The mass-mean direction of a binary concept is the difference of the class means,
`theta = mu_1 - mu_0`; the paper's probe is `sigmoid(theta . x)` on activations centred at the
data mean, and its "IID" variant `sigmoid(theta . Sigma^-1 x)`, with `Sigma` the covariance of
the data centred per class (the pooled within-class covariance; Marks & Tegmark's code inverts it
with `pinv(Sigma, hermitian=True, atol=1e-3)`, as here).

lingprobe stores a mass-mean probe as a linear probe (`coef`, `intercept`), so that
`ProbeResults`, its tables, metrics and forward passes work unchanged. With K classes the
logits are the nearest-class-mean (LDA-style) scores

    logit_c(x) = x . mu_c - 1/2 |mu_c|^2                    (kind="mass_mean")
    logit_c(x) = x . S mu_c - 1/2 mu_c . S mu_c, S = pinv(Sigma)   (kind="mass_mean_iid")

(no class priors: every class present in the training items is equally likely a priori). For
two classes the logit difference is `theta . (x - (mu_0 + mu_1) / 2)` (IID: `S theta . (...)`):
the paper's projection on the direction, thresholded at the midpoint of the class means, which
is the paper's threshold (the data mean) when the classes are balanced. The IID logits are those
of scikit-learn's `LinearDiscriminantAnalysis` with equal priors. Means are computed relative to
the centre of the class means (the same logits up to a constant per item, which the softmax
ignores; fewer float32 digits lost on features with a large common offset). A class with no
training item gets weight 0 and intercept -inf: it is never predicted.
"""

from __future__ import annotations

from typing import Literal

import torch
from jaxtyping import Bool, Float, Int
from torch import Tensor

MassMeanKind = Literal["mass_mean", "mass_mean_iid"]
MASS_MEAN_KINDS: tuple[MassMeanKind, ...] = ("mass_mean", "mass_mean_iid")
PINV_ATOL = 1e-3  # Marks & Tegmark (2023), geometry-of-truth probes.py: MMProbe's pinv atol


def class_means(
    x: Float[Tensor, "item dim"],
    labels: Int[Tensor, " item"],
    members: Bool[Tensor, " item"],
    k: int,
) -> tuple[Float[Tensor, "class dim"], Int[Tensor, " class"]]:
    """Float64 mean of each class over the member items, and the class counts (a class without
    members gets a zero row and count 0)."""
    at = members.nonzero().flatten()
    y = labels.index_select(0, at)
    sums = torch.zeros(k, x.shape[1], dtype=torch.float64, device=x.device)
    sums.index_add_(0, y, x.index_select(0, at).double())
    counts = torch.bincount(y, minlength=k)
    return sums / counts.clamp(min=1)[:, None], counts


def within_class_covariance(
    x: Float[Tensor, "item dim"],
    labels: Int[Tensor, " item"],
    members: Bool[Tensor, " item"],
    means: Float[Tensor, "class dim"],
) -> Float[Tensor, "dim dim"]:
    """The covariance of the member items, each centred at its class mean, divided by their
    number (Marks & Tegmark; scikit-learn's LDA `covariance_` with empirical class priors)."""
    at = members.nonzero().flatten()
    centred = x.index_select(0, at).double() - means.index_select(0, labels.index_select(0, at))
    return centred.T @ centred / max(1, at.numel())


def mass_mean_probe(
    x: Float[Tensor, "item dim"],
    labels: Int[Tensor, " item"],
    members: Bool[Tensor, " item"],
    k: int,
    iid: bool,
) -> tuple[Float[Tensor, "class dim"], Float[Tensor, " class"]]:
    """`coef [class, dim]` and `intercept [class]` (float32) of one mass-mean probe trained on
    the member items (see the module docstring for the logits)."""
    means, counts = class_means(x, labels, members, k)
    present = counts > 0
    centre = means[present].mean(dim=0)
    shifted = torch.where(present[:, None], means - centre, 0.0)
    if iid:
        cov = within_class_covariance(x, labels, members, means)
        coef = shifted @ torch.linalg.pinv(cov, hermitian=True, atol=PINV_ATOL)
    else:
        coef = shifted
    intercept = -(coef @ centre) - 0.5 * (coef * shifted).sum(dim=1)
    intercept = torch.where(present, intercept, -torch.inf)
    return coef.float(), intercept.float()
