"""Mass-mean directions with their provenance: where each steering vector was read.

`directions(feats, labels, model=..., data=...)` gives, per site, the difference of the class
means of two classes (Marks & Tegmark 2023; with `iid=True`, times the pseudo-inverse of the
within-class covariance, `probes.mass_mean`), the vector that contrastive activation addition
adds to the residual stream (`internals.intervene.steer`). Each direction carries what it was
read from: the model's content key and the data's name (given by the caller: `probes` never
loads a model), the site, the features' content key (`FeatureSet.key`, or a digest of the
tensor's bytes), the two classes and their item counts, and the items used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
import torch
from jaxtyping import Float, Int
from torch import Tensor

from lingprobe.digest import bytes_digest
from lingprobe.feature_set import FeatureSet
from probes._grid.inputs import check_features, check_site_names
from probes.errors import ProbeInputError
from probes.mass_mean import class_means, mass_mean_probe

PROVENANCE_COLUMNS: dict[str, pl.DataType | type[pl.DataType]] = {
    "site": pl.Int64,
    "site_name": pl.Utf8,
    "model": pl.Utf8,
    "data": pl.Utf8,
    "features": pl.Utf8,
    "kind": pl.Utf8,
    "positive": pl.Int64,
    "negative": pl.Int64,
    "n_positive": pl.Int64,
    "n_negative": pl.Int64,
    "norm": pl.Float64,
    "items": pl.List(pl.Int64),
}


@dataclass(frozen=True)
class Directions:
    """One direction per site (`vectors [site, dim]`, float32) and one provenance row per site
    (`provenance`: site, site_name, model, data, features, kind, positive, negative,
    n_positive, n_negative, norm, and `items`, the feature rows the means were taken over)."""

    vectors: Float[Tensor, "site dim"]
    provenance: pl.DataFrame

    def vector(self, site: int | str) -> Float[Tensor, " dim"]:
        """The direction of a site, by its index in the features or its name."""
        column = "site_name" if isinstance(site, str) else "site"
        rows = self.provenance[column].to_list()
        if site not in rows:
            raise ProbeInputError(f"Directions.vector: no site {site!r}; the sites are {rows}")
        return self.vectors[rows.index(site)]

    def frame(self) -> pl.DataFrame:
        """The provenance with each direction as a `direction` list column (one table that
        keeps every vector beside where it was read, e.g. to write as parquet)."""
        vectors = pl.Series("direction", self.vectors.tolist(), dtype=pl.List(pl.Float32))
        return self.provenance.with_columns(vectors)


def directions(
    feats: Float[Tensor, "item site dim"] | FeatureSet,
    labels: Int[Tensor, " item"] | np.ndarray,
    *,
    model: str,
    data: str,
    items: Int[Tensor, " used"] | np.ndarray | None = None,
    positive: int = 1,
    negative: int = 0,
    iid: bool = False,
    site_names: Sequence[str] | None = None,
) -> Directions:
    """The mass-mean direction `mean(positive) - mean(negative)` at every site of `feats`.

    labels: one class id per item; only the items of classes `positive` and `negative` count,
    among `items` (feature row indices; default every item). `model`: the model's content key
    (`subject.content_key()`), `data`: the data's name; both are recorded, not checked.
    `site_names`: default the FeatureSet's own, else none (nulls). `iid=True`: the direction
    times the pseudo-inverse of the within-class covariance (the paper's IID probe direction).
    A FeatureSet is read one site at a time.

    Examples:
        >>> import torch
        >>> from probes import directions
        >>> labels = torch.tensor([0, 0, 1, 1])
        >>> feats = torch.tensor([[0.0, 0], [0, 2], [4, 0], [4, 2]])[:, None]  # one site
        >>> found = directions(feats, labels, model="key", data="toy")
        >>> found.vectors
        tensor([[4., 0.]])
        >>> found.provenance["n_positive"].to_list(), found.provenance["items"].to_list()
        ([2], [[0, 1, 2, 3]])
    """
    if isinstance(feats, Tensor):
        check_features(feats)
    n_items, n_sites, _ = feats.shape
    y = _labels(labels, n_items)
    chosen = _items(items, n_items)
    used = chosen[(y[chosen] == positive) | (y[chosen] == negative)]
    counts = [int((y[used] == c).sum()) for c in (positive, negative)]
    if min(counts) == 0 or positive == negative:
        raise ProbeInputError(
            f"directions: {counts[0]} items of class positive={positive} and {counts[1]} of"
            f" negative={negative} among the chosen items; give two distinct classes that both"
            " have items."
        )
    names = feats.site_names if isinstance(feats, FeatureSet) and site_names is None else site_names
    check_site_names(names, n_sites, "feats")
    binary = (y[used] == positive).long()
    members = torch.ones(len(used), dtype=torch.bool)
    vectors = torch.empty(n_sites, feats.shape[2])
    for s in range(n_sites):
        x = feats[:, s][used].float()
        if iid:
            coef, _ = mass_mean_probe(x, binary, members, 2, iid=True)
            vectors[s] = coef[1] - coef[0]
        else:
            means, _ = class_means(x, binary, members, 2)
            vectors[s] = (means[1] - means[0]).float()
    features = feats.key if isinstance(feats, FeatureSet) else _tensor_key(feats)
    provenance = pl.DataFrame(
        {
            "site": list(range(n_sites)),
            "site_name": list(names) if names is not None else [None] * n_sites,
            "model": [model] * n_sites,
            "data": [data] * n_sites,
            "features": [features] * n_sites,
            "kind": ["mass_mean_iid" if iid else "mass_mean"] * n_sites,
            "positive": [positive] * n_sites,
            "negative": [negative] * n_sites,
            "n_positive": [counts[0]] * n_sites,
            "n_negative": [counts[1]] * n_sites,
            "norm": vectors.double().norm(dim=1).tolist(),
            "items": [used.tolist()] * n_sites,
        },
        schema=PROVENANCE_COLUMNS,
    )
    return Directions(vectors, provenance)


def _labels(labels: Tensor | np.ndarray, n_items: int) -> Int[Tensor, " item"]:
    y = torch.as_tensor(labels).cpu()
    if y.shape != (n_items,) or y.is_floating_point() or y.is_complex():
        raise ProbeInputError(
            f"directions: labels of dtype {y.dtype} and shape {tuple(y.shape)} for {n_items}"
            " items; give one integer class id per item."
        )
    return y.long()


def _items(items: Tensor | np.ndarray | None, n_items: int) -> Int[Tensor, " used"]:
    if items is None:
        return torch.arange(n_items)
    chosen = torch.as_tensor(items).cpu()
    if chosen.dtype == torch.bool and chosen.shape == (n_items,):
        chosen = chosen.nonzero().flatten()
    integer = not (chosen.dtype == torch.bool or chosen.is_floating_point() or chosen.is_complex())
    if chosen.ndim == 1 and integer and chosen.numel() > 0:
        low, high = int(chosen.min()), int(chosen.max())
        if low >= 0 and high < n_items:
            return chosen.long().unique()
    raise ProbeInputError(
        f"directions: items must be feature row indices 0..{n_items - 1} (or an [item] bool"
        f" mask of {n_items}); got {chosen.dtype} of shape {tuple(chosen.shape)}"
        + (f" from {low} to {high}" if chosen.ndim == 1 and integer and chosen.numel() else "")
    )


def _tensor_key(feats: Tensor) -> str:
    """A digest of the features' bytes (shape and dtype included)."""
    flat = feats.detach().cpu().contiguous()
    header = f"{tuple(flat.shape)}{flat.dtype}".encode()
    return bytes_digest(header, flat.view(torch.uint8).numpy().tobytes())
