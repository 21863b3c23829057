"""Dataset difficulty by pointwise V-information (Ethayarajh et al. 2022; paper §3.5).

`PVI(x -> y) = -log2 f[null](y) + log2 f[x](y)`, where `f[x]` is a probe on the pair features
and `f[null]` the null-input model. A model trained on empty inputs predicts the label
distribution of its training data, so `f[null](y)` is the training label prior. V-information
is the mean PVI over a dataset; higher means easier.

Every item gets a PVI from a probe that did not train on it: `val` items from probes trained on
all of train, train items out-of-fold (`pvi_folds` stratified folds; the other folds train).
Each training set carves its own stratified dev part for the best epoch (lowest dev loss).
Per item, PVI is averaged over the probe seeds. All training sets (folds and the full train
set) are explicit train/dev masks of one probe grid, trained together; each probe trains as it
would in its own `fit_probes` call on its training set. Features in a store (`NLIFeatureSet`)
are trained on and scored by groups of sites within `config.train.memory`
(`probe_outputs.held_out_probabilities`).
"""

from __future__ import annotations

import polars as pl
import torch
from jaxtyping import Bool, Float, Int
from torch import Tensor

from internals import FeatureSet
from probes import TEST, TRAIN, ProbeResults, fit_probes
from suites.curriculum.config import CurriculumConfig
from suites.curriculum.probe_outputs import held_out_probabilities
from suites.curriculum.sampling import carve_dev, stratified_folds
from suites.curriculum.stored_features import PairFeatures
from suites.errors import TaskError
from suites.tasks import Task

SIMPLE, HARD = "simple", "hard"


def label_prior(
    targets: Int[Tensor, " item"], num_classes: int, include: Bool[Tensor, " item"] | None = None
) -> Float[Tensor, " class"]:
    """The null-input model f[null]: class frequencies among the (included) training items."""
    chosen = targets if include is None else targets[include]
    if chosen.numel() == 0:
        raise TaskError("label_prior: no training items; include at least one item")
    counts = torch.bincount(chosen, minlength=num_classes).double()
    return counts / counts.sum()


def pointwise_v_information(
    probs: Float[Tensor, "*batch item class"],
    targets: Int[Tensor, " item"],
    prior: Float[Tensor, " class"],
) -> Float[Tensor, "*batch item"]:
    """`PVI(x -> y) = -log2 prior(y) + log2 f[x](y)`, in bits, for each item (and probe)."""
    if bool((prior[targets] <= 0).any()):
        absent = sorted(set(targets[prior[targets] <= 0].tolist()))
        raise TaskError(
            f"classes {absent} have zero prior (absent from the training items), so their PVI"
            " is infinite; train f[x] and f[null] on data holding every class"
        )
    index = targets.expand(*probs.shape[:-1])[..., None]
    p_gold = probs.double().gather(-1, index).squeeze(-1)
    return -torch.log2(prior.double()[targets]) + torch.log2(p_gold)


def v_information(pvi: Float[Tensor, "*batch item"]) -> Float[Tensor, "*batch"]:
    """V-information I(X -> Y): the mean PVI over the items."""
    return pvi.double().mean(dim=-1)


def difficulty_halves(pvi: Float[Tensor, " item"]) -> list[str]:
    """`simple` for the ceil(n/2) items of highest PVI, `hard` for the rest (ties: earlier
    items first), in item order."""
    order = sorted(range(pvi.shape[0]), key=lambda i: (-float(pvi[i]), i))
    simple = set(order[: (len(order) + 1) // 2])
    return [SIMPLE if i in simple else HARD for i in range(len(order))]


def _job_pvi(
    result: ProbeResults,
    mask: int,
    x: Float[Tensor, "item site width"] | FeatureSet,
    targets: Int[Tensor, " item"],
    train: Bool[Tensor, " item"],
    heldout: Bool[Tensor, " item"],
    num_classes: int,
    memory: int | None,
) -> tuple[Float[Tensor, "site heldout"], Float[Tensor, "site heldout"], Float[Tensor, " heldout"]]:
    """(PVI, `log2 f[x](y)`) averaged over seeds per site, and log2 prior(y), of the `heldout`
    items under the probes of train mask `mask` (trained on `train`); a `FeatureSet` is scored
    by groups of sites within `memory` bytes."""
    rows = heldout.nonzero().flatten()
    prior = label_prior(targets, num_classes, train)
    probes = result.probes.filter(pl.col("mask") == float(mask)).sort("probe")
    chosen = torch.tensor(probes["probe"].to_list())
    probs = held_out_probabilities(result, x, rows, memory)[chosen]
    pvi = pointwise_v_information(probs, targets[rows], prior)  # [probe, item]
    log_px = torch.log2(probs.gather(-1, targets[rows].expand(probs.shape[0], -1)[..., None]))
    sites = torch.tensor(probes["site"].to_list())
    n_sites = x.shape[1]
    by_site = torch.zeros(n_sites, rows.numel(), dtype=torch.float64)
    px_site = torch.zeros_like(by_site)
    counts = torch.bincount(sites, minlength=n_sites).double()[:, None]
    by_site.index_add_(0, sites, pvi)
    px_site.index_add_(0, sites, log_px.squeeze(-1))
    return by_site / counts, px_site / counts, torch.log2(prior[targets[rows]])


def _cut_halves(
    cut: Float[Tensor, " item"],
    targets: Int[Tensor, " item"],
    parts: tuple[Bool[Tensor, " item"], ...],
    how: str,
) -> list[str]:
    """simple/hard per item within each part (and within each label with `per_label`)."""
    difficulty = [""] * cut.shape[0]
    groups = [
        part & (targets == label) if how == "per_label" else part
        for part in parts
        for label in (range(int(targets.max()) + 1) if how == "per_label" else [None])
    ]
    for group in groups:
        members = group.nonzero().flatten()
        if members.numel():
            for row, half in zip(members.tolist(), difficulty_halves(cut[members])):
                difficulty[row] = half
    return difficulty


def pvi_scores(
    task: Task,
    feats: PairFeatures,
    config: CurriculumConfig | None = None,
    *,
    progress: bool = True,
) -> pl.DataFrame:
    """PVI of every item at every site, with its simple/hard half (cut at `config.pvi_site`,
    within train and within val separately, and within each label if `config.halves` is
    `per_label`).

    Columns: phenomenon, row (item index in the task), split, idx, label, fold (-1 for val),
    site, site_name, layer, log2_prior, log2_px, pvi, difficulty.
    """
    config = config or CurriculumConfig()
    x = feats.pair(config.combine)
    targets, k = task.targets, len(task.labels)
    train, test = task.splits == TRAIN, task.splits == TEST
    fold = stratified_folds(targets, train, config.pvi_folds, config.split_seed)
    pvi = torch.zeros(x.shape[1], len(task), dtype=torch.float64)
    log_px, log_prior = torch.zeros_like(pvi), torch.zeros(len(task), dtype=torch.float64)
    jobs = [(train & (fold != f), fold == f) for f in range(config.pvi_folds)]
    jobs += [(train, test)] if bool(test.any()) else []
    codes = [
        carve_dev(fit_on, targets, config.dev_fraction, config.split_seed, test=heldout)
        for fit_on, heldout in jobs
    ]
    grid = config.masked_grid(codes)
    result = fit_probes(
        x,
        targets,
        task.splits,
        grid,
        config.train_config(select_by="loss"),
        num_classes=k,
        progress=progress,
    )
    memory = config.train.memory_bytes  # a FeatureSet's held-out rows are scored within it
    for mask, (_, heldout) in enumerate(jobs):
        trained = codes[mask] == TRAIN
        values, px, prior = _job_pvi(result, mask, x, targets, trained, heldout, k, memory)
        pvi[:, heldout], log_px[:, heldout], log_prior[heldout] = values, px, prior
    used = train | test
    rows = used.nonzero().flatten()
    difficulty = _cut_halves(pvi[config.pvi_site], targets, (train, test), config.halves)
    frame = task.frame
    items = pl.DataFrame(
        {
            "row": rows.tolist(),
            "split": frame["split"].gather(rows.numpy()).to_list(),
            "idx": frame["idx"].gather(rows.numpy()).to_list()
            if "idx" in frame.columns
            else rows.tolist(),
            "label": frame["label"].gather(rows.numpy()).to_list(),
            "fold": fold[rows].tolist(),
            "log2_prior": log_prior[rows].tolist(),
            "difficulty": [difficulty[r] for r in rows.tolist()],
        }
    )
    per_site = pl.concat(
        pl.DataFrame(
            {
                "row": rows.tolist(),
                "site": [s] * rows.numel(),
                "log2_px": log_px[s, rows].tolist(),
                "pvi": pvi[s, rows].tolist(),
            },
            schema={"row": pl.Int64, "site": pl.Int64, "log2_px": pl.Float64, "pvi": pl.Float64},
        )
        for s in range(x.shape[1])
    )
    return (
        items.join(per_site, on="row")
        .join(feats.site_table(), on="site")
        .with_columns(phenomenon=pl.lit(task.phenomenon))
        .select(
            "phenomenon",
            "row",
            "split",
            "idx",
            "label",
            "fold",
            "site",
            "site_name",
            "layer",
            "log2_prior",
            "log2_px",
            "pvi",
            "difficulty",
        )
        .sort("site", "row")
    )


def v_information_table(pvi_table: pl.DataFrame) -> pl.DataFrame:
    """V-information (mean PVI) per phenomenon, site and split, with PVI spread and counts."""
    keys = ["phenomenon", "site", "site_name", "layer", "split"]
    return (
        pvi_table.group_by(keys)
        .agg(
            v_information=pl.col("pvi").mean(),
            pvi_std=pl.col("pvi").std(),
            median_pvi=pl.col("pvi").median(),
            n_items=pl.len(),
        )
        .sort(keys)
    )
