"""Bootstrap replicates of the rank metrics (AUROC, recall at a false-positive rate).

Rank metrics are not sums over items, so `probes.item_sums` cannot serve them; instead each
probe's class scores are sorted once, and every resample is scored by weighting the sorted
items with the resample's item counts (`probes.rank_metrics`): one batched tensor operation
over `[resample, probe (x class), item]` per block, the same resamples as the other metrics
(`probes._grid.resampling.ItemResamples`), so intervals and differences stay paired. The
leave-one-item-out values of BCa come in closed form (`jackknife_auroc`,
`jackknife_recall_at_fpr`).
"""

from __future__ import annotations

import torch
from jaxtyping import Float, Int
from torch import Tensor

from probes._grid.inputs import resolve_device
from probes._grid.resampling import ItemResamples
from probes.bootstrap import Replicates
from probes.rank_metrics import (
    DEFAULT_FPR,
    RANK_ELEMENTS,
    RANK_METRICS,
    check_fpr,
    class_rows,
    jackknife_auroc,
    jackknife_recall_at_fpr,
    macro,
    rank_metrics,
)


def bootstrap_rank_metrics(
    log_probs: Float[Tensor, "probe item class"],
    truth: Int[Tensor, "probe item"],
    resamples: ItemResamples,
    *,
    fpr: float = DEFAULT_FPR,
    device: torch.device | str | None = None,
    jackknife: bool = True,
) -> dict[str, Replicates]:
    """`{auroc, recall_at_fpr: Replicates}` with one statistic per probe: on the test items,
    on each resample and (`jackknife`) with each item left out."""
    check_fpr(fpr)
    dev = resolve_device(device, log_probs)
    p, n, k = log_probs.shape
    rows = 1 if k == 2 else k
    scores, labels = log_probs.to(dev), truth.to(dev).long()
    point = rank_metrics(scores, labels, fpr=fpr)
    boot: dict[str, list[Tensor]] = {m: [] for m in RANK_METRICS}
    for counts in resamples.blocks(dev):
        per_resample = max(1, RANK_ELEMENTS // (rows * n))  # resamples of one probe per call
        for start in range(0, counts.shape[0], per_resample):
            values = rank_metrics(
                scores, labels, fpr=fpr, weights=counts[start : start + per_resample]
            )
            for m in RANK_METRICS:
                boot[m].append(values[m].T.cpu())
    jack = {m: torch.zeros(p, 0, dtype=torch.float64) for m in RANK_METRICS}
    if jackknife:
        jack = _jackknife(scores, labels, fpr)
    return {
        m: Replicates(point[m][0].cpu(), torch.cat(boot[m], dim=1), jack[m]) for m in RANK_METRICS
    }


def _jackknife(
    scores: Float[Tensor, "probe item class"], truth: Int[Tensor, "probe item"], fpr: float
) -> dict[str, Float[Tensor, "probe item"]]:
    p, n, k = scores.shape
    step = max(1, RANK_ELEMENTS // ((1 if k == 2 else k) * max(n, 1)))
    parts: dict[str, list[Tensor]] = {m: [] for m in RANK_METRICS}
    for start in range(0, p, step):
        block = slice(start, start + step)
        ranked = class_rows(scores[block], truth[block])
        bad = scores[block].isnan().any(2).any(1)[:, None]
        by_row = {
            "auroc": jackknife_auroc(ranked),
            "recall_at_fpr": jackknife_recall_at_fpr(ranked, fpr),
        }
        for m, rows in by_row.items():
            value = macro(rows.T, k).T  # [probe, item]
            parts[m].append(torch.where(bad, torch.nan, value).cpu())
    return {m: torch.cat(parts[m]) for m in RANK_METRICS}
