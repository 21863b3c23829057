"""The layer-wise syntax probe on features that stay on disk: a `FeatureSet` under a budget.

The train rows' per-site mean and standard deviation come from groups of sites that fit the
budget (the same float32 reductions as the in-memory `layer_predictions`); the standardised
train rows are written chunk by chunk into a derived feature set in the store
(`suites.probing.derived_feature_set`); `fit_logistic_regression` reads that by groups of sites;
the test rows are standardised and scored by groups of sites too. The predictions equal those of
`layer_predictions` on the same features.
"""

from __future__ import annotations

from pathlib import Path

import torch
from jaxtyping import Float, Int
from torch import Tensor

from internals import FeatureSet, fingerprint
from probes import fit_logistic_regression
from suites.errors import TaskError
from suites.probing import derived_feature_set

MIN_STD = 1e-6  # the least standard deviation divided by (a constant feature: not by zero)
COPIES = 2  # a group of sites is read, then made site-major (`[site, item, dim]`) to reduce


def stored_layer_predictions(
    features: FeatureSet,
    train_rows: Int[Tensor, " train"],
    train_y: Int[Tensor, " train"],
    test_rows: Int[Tensor, " test"],
    *,
    store: str | Path,
    memory: int,
    C: float,
    max_iter: int,
    standardize: bool,
) -> Int[Tensor, "site test"]:
    """`layer_predictions` of `features`' rows `train_rows` (fit) and `test_rows` (predicted),
    holding at most `memory` bytes of float32 features at once."""
    _, n_sites, dim = features.shape
    site_bytes = len(train_rows) * dim * 4
    if site_bytes > memory:
        raise TaskError(
            f"SyntaxProbeConfig.memory={memory} bytes is less than one site's train features"
            f" ({site_bytes} bytes: {len(train_rows)} sentences x {dim} floats); give memory of"
            f" at least {site_bytes} bytes, or fewer sentences"
        )
    mean, std = _train_statistics(features, train_rows, memory, standardize)
    name = f"suites.cc.standardised(rows={fingerprint(train_rows.tolist())}, {standardize})"

    def standardised(chunk: Float[Tensor, "item site dim"]) -> Float[Tensor, "item site dim"]:
        return (chunk - mean.transpose(0, 1)) / std.transpose(0, 1) if standardize else chunk

    train = derived_feature_set(
        features,
        store,
        name,
        standardised,
        items=train_rows,
        memory=memory,
        dtype=torch.float32,  # the values the in-memory fit sees
    )
    labels = train_y[None, :].expand(n_sites, -1).contiguous()
    fitted = fit_logistic_regression(train, labels, C=C, max_iter=max_iter, memory=memory)
    predictions = []
    for group in _site_groups(n_sites, len(test_rows) * dim * 4, memory):
        # where one site's test rows do not fit, they are scored in blocks of rows
        rows = max(1, memory // (dim * 4)) if len(group) == 1 else len(test_rows)
        probes = fitted.select(torch.tensor(group))
        blocks = []
        for start in range(0, len(test_rows), rows):
            test = _site_major(features, group, test_rows[start : start + rows])
            if standardize:
                test.sub_(mean[group]).div_(std[group])  # in place: no second copy
            blocks.append(probes.predict(test))
            del test
        predictions.append(torch.cat(blocks, dim=1))
    return torch.cat(predictions)


def _train_statistics(
    features: FeatureSet, rows: Int[Tensor, " train"], memory: int, standardize: bool
) -> tuple[Float[Tensor, "site 1 dim"], Float[Tensor, "site 1 dim"]]:
    """Per-site mean and standard deviation of `rows`, read by groups of sites within `memory`
    (empty tensors when nothing is standardised)."""
    if not standardize:
        return torch.empty(0, 1, 0), torch.empty(0, 1, 0)
    _, n_sites, dim = features.shape
    means, stds = [], []
    for group in _site_groups(n_sites, len(rows) * dim * 4, memory):
        train = _site_major(features, group, rows)
        means.append(train.mean(dim=1, keepdim=True))
        stds.append(train.std(dim=1, keepdim=True).clamp_min(MIN_STD))
        del train
    return torch.cat(means), torch.cat(stds)


def _site_major(
    features: FeatureSet, sites: list[int], rows: Int[Tensor, " row"]
) -> Float[Tensor, "site row dim"]:
    """Rows `[site, row, dim]`; a single site's read is already site-major (no copy)."""
    return features.read(sites=sites, items=rows).transpose(0, 1).contiguous()


def _site_groups(n_sites: int, site_bytes: int, memory: int) -> list[list[int]]:
    """Consecutive sites, as many at once as fit `memory` with the site-major copy of a group
    of several (one site alone needs no copy)."""
    per_group = max(1, memory // max(1, COPIES * site_bytes))
    return [list(range(a, min(a + per_group, n_sites))) for a in range(0, n_sites, per_group)]
