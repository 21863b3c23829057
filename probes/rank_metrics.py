"""AUROC and recall at a false-positive rate of every probe at once, from its scores.

Both are rank statistics of binary problems: a row of scores `[row, item]` and which items are
positive. Each row is sorted once (descending); a tie group is the run of equal scores, and
every quantity is a cumulative sum of item weights read at the group boundaries. Weights
`[batch, item]` are item counts: all ones for the test items, a bootstrap resample's counts
(`probes._grid.resampling`), so a resample is scored without materialising its items (a weighted
item is that many copies of it, and copies of one item are never a positive-negative pair).

* AUROC (Mann-Whitney): the weight of positive-negative pairs the scores order correctly,
  ties counted half, over `W_pos * W_neg`: `sklearn.metrics.roc_auc_score` (average ranks for
  ties). NaN where a row has no positive or no negative item.
* Recall at FPR `alpha`: the thresholds are the distinct scores `t` (predict positive where
  score >= t) and +inf, as `sklearn.metrics.roc_curve(..., drop_intermediate=False)`. Among the
  thresholds whose false-positive rate `FP(t) / W_neg <= alpha`, the largest true-positive
  rate `TP(t) / W_pos` (0 when only +inf qualifies). `max(tpr[fpr <= alpha])` of that curve.

Multi-class probes (K > 2) are scored one-vs-rest, each class's log-probability against the
others, and macro-averaged over the classes that have both a positive and a negative item
(sklearn's `roc_auc_score(multi_class="ovr", average="macro")` needs every class present; a
bootstrap resample may miss a rare class, which then drops out of that resample's mean). Binary
probes (K = 2) are scored by the log-probability of class 1 (sklearn's positive label).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from jaxtyping import Bool, Float, Int
from torch import Tensor

from probes.errors import ProbeConfigError
from probes.metric_table import metric_names

RANK_METRICS = metric_names("ranks")  # the table's rank metrics, computed here by name
DEFAULT_FPR = 0.01  # recall at 1 % false positives, as monitoring work reports (probelab)
RANK_ELEMENTS = 1 << 22  # bound on one block of sorted weights (memory, not results)


@dataclass(frozen=True)
class RankedRows:
    """Rows of scores sorted descending once; every tensor is in sorted order per row.

    order: item index at each sorted position; positive: whether that item is positive;
    first / last: the sorted positions where the position's tie group starts and ends.
    """

    order: Int[Tensor, "row item"]
    positive: Bool[Tensor, "row item"]
    first: Int[Tensor, "row item"]
    last: Int[Tensor, "row item"]

    @classmethod
    def of(
        cls, scores: Float[Tensor, "row item"], positive: Bool[Tensor, "row item"]
    ) -> RankedRows:
        """Sort `scores` (descending) and find the tie groups."""
        values, order = scores.sort(dim=1, descending=True, stable=True)
        n = values.shape[1]
        pos = torch.arange(n, device=values.device).expand_as(values)
        starts = torch.ones_like(values, dtype=torch.bool)
        starts[:, 1:] = values[:, 1:] != values[:, :-1]
        ends = torch.ones_like(starts)
        ends[:, :-1] = starts[:, 1:]
        first = torch.where(starts, pos, 0).cummax(dim=1).values
        last = torch.where(ends, pos, n).flip(1).cummin(dim=1).values.flip(1)
        return cls(order, positive.gather(1, order), first, last)

    def split(
        self, weights: Float[Tensor, "batch item"]
    ) -> tuple[Float[Tensor, "batch row item"], Float[Tensor, "batch row item"]]:
        """(positive, negative) weights of every row's sorted items, float64."""
        rows, n = self.order.shape
        w = weights.double().index_select(1, self.order.reshape(-1)).view(-1, rows, n)
        zero = w.new_zeros(())
        return torch.where(self.positive, w, zero), torch.where(self.positive, zero, w)


def fp_allowance(alpha: float, negatives: Float[Tensor, "*batch"]) -> Float[Tensor, "*batch"]:
    """The largest whole number m of false positives with `m / negatives <= alpha`."""
    m = (alpha * negatives).floor()
    m = torch.where((m + 1) / negatives <= alpha, m + 1, m)
    return torch.where(m / negatives > alpha, m - 1, m)


def _group_sums(
    c: Float[Tensor, "batch row item"], ranked: RankedRows
) -> tuple[Float[Tensor, "batch row item"], Float[Tensor, "batch row item"]]:
    """(weight before each position's tie group, weight inside it) from the cumulative sum `c`
    of one kind of weight."""
    idx_last = ranked.last.expand_as(c)
    idx_first = ranked.first.expand_as(c)
    upto_last = c.gather(2, idx_last)
    zero = torch.zeros_like(c[..., :1])
    before = torch.cat([zero, c[..., :-1]], dim=2).gather(2, idx_first)
    return before, upto_last - before


def weighted_auroc(
    ranked: RankedRows, weights: Float[Tensor, "batch item"]
) -> Float[Tensor, "batch row"]:
    """AUROC of every row under every weighting (ties count half)."""
    pos, neg = ranked.split(weights)
    c_neg = neg.cumsum(2)
    before, inside = _group_sums(c_neg, ranked)
    w_neg = c_neg[..., -1]
    w_pos = pos.sum(2)
    below = w_neg[..., None] - before - inside  # negatives scored lower than the positive
    u = (pos * (below + 0.5 * inside)).sum(2)
    return _defined(u / (w_pos * w_neg), w_pos, w_neg)


def weighted_recall_at_fpr(
    ranked: RankedRows, weights: Float[Tensor, "batch item"], fpr: float = DEFAULT_FPR
) -> Float[Tensor, "batch row"]:
    """Recall at the lowest threshold whose false-positive rate is at most `fpr`."""
    pos, neg = ranked.split(weights)
    tp, fp = pos.cumsum(2), neg.cumsum(2)
    w_pos, w_neg = tp[..., -1], fp[..., -1]
    allowed = fp_allowance(fpr, w_neg)
    end = _is_end(ranked)
    eligible = end & (fp <= allowed[..., None])
    best = torch.where(eligible, tp, 0.0).amax(2)
    return _defined(best / w_pos, w_pos, w_neg)


def _is_end(ranked: RankedRows) -> Bool[Tensor, "row item"]:
    n = ranked.last.shape[1]
    return ranked.last == torch.arange(n, device=ranked.last.device)


def _defined(value: Tensor, w_pos: Tensor, w_neg: Tensor) -> Tensor:
    return torch.where((w_pos > 0) & (w_neg > 0), value, torch.nan)


def jackknife_auroc(ranked: RankedRows) -> Float[Tensor, "row item"]:
    """AUROC of every row with each item left out (unit weights), in item order: removing a
    positive removes its correctly ordered pairs, removing a negative likewise (closed form)."""
    ones = torch.ones(1, ranked.order.shape[1], dtype=torch.float64, device=ranked.order.device)
    pos, neg = ranked.split(ones)
    c_neg, c_pos = neg.cumsum(2), pos.cumsum(2)
    nb, ni = _group_sums(c_neg, ranked)
    pb, pi = _group_sums(c_pos, ranked)
    w_neg, w_pos = c_neg[..., -1:], c_pos[..., -1:]
    share_pos = w_neg - nb - ni + 0.5 * ni  # pairs a positive wins
    share_neg = pb + 0.5 * pi  # pairs a negative loses
    u = (pos * share_pos).sum(2, keepdim=True)
    is_pos = ranked.positive[None]
    left = torch.where(is_pos, u - share_pos, u - share_neg)
    n_pos = torch.where(is_pos, w_pos - 1, w_pos)
    n_neg = torch.where(is_pos, w_neg, w_neg - 1)
    value = _defined(left / (n_pos * n_neg), n_pos, n_neg)[0]
    return _unsort(value, ranked)


def jackknife_recall_at_fpr(
    ranked: RankedRows, fpr: float = DEFAULT_FPR
) -> Float[Tensor, "row item"]:
    """Recall at FPR `fpr` of every row with each item left out (unit weights), in item order.

    Removing a positive lowers TP at the thresholds at or below its score and leaves the chosen
    threshold; removing a negative lowers FP there and the allowance to that of W_neg − 1
    negatives, so the chosen threshold is the last one with FP <= m' + 1 when that lies at or
    below the negative's score, else the last one with FP <= m'."""
    ones = torch.ones(1, ranked.order.shape[1], dtype=torch.float64, device=ranked.order.device)
    pos, neg = ranked.split(ones)
    tp, fp = pos.cumsum(2)[0], neg.cumsum(2)[0]  # [row, item]
    w_pos, w_neg = tp[:, -1:], fp[:, -1:]
    end = _is_end(ranked)
    n = tp.shape[1]
    at = torch.arange(n, device=tp.device).expand_as(tp)

    def last_end(limit: Tensor) -> Tensor:  # last group end with FP <= limit; -1: none
        return torch.where(end & (fp <= limit), at, -1).amax(1, keepdim=True)

    def tp_at(position: Tensor) -> Tensor:
        return torch.where(position >= 0, tp.gather(1, position.clamp(min=0)), 0.0)

    chosen = last_end(fp_allowance(fpr, w_neg))
    best = tp_at(chosen)
    drop_pos = (best - (ranked.last <= chosen).double()) / (w_pos - 1)
    m_less = fp_allowance(fpr, w_neg - 1)
    a, b = last_end(m_less), last_end(m_less + 1)
    drop_neg = torch.where(b >= ranked.last, tp_at(b), tp_at(a)) / w_pos
    value = torch.where(
        ranked.positive,
        _defined(drop_pos, w_pos - 1, w_neg),
        _defined(drop_neg, w_pos, w_neg - 1),
    )
    return _unsort(value, ranked)


def _unsort(value: Float[Tensor, "row item"], ranked: RankedRows) -> Float[Tensor, "row item"]:
    return torch.empty_like(value).scatter_(1, ranked.order, value)


def class_rows(
    log_probs: Float[Tensor, "probe item class"], truth: Int[Tensor, "probe item"]
) -> RankedRows:
    """The binary problems of classification probes: class 1 against 0 for K = 2 (one row per
    probe), else every class against the rest (rows probe-major, K per probe)."""
    p, n, k = log_probs.shape
    if k == 2:
        return RankedRows.of(log_probs[..., 1], truth == 1)
    scores = log_probs.permute(0, 2, 1).reshape(p * k, n)
    classes = torch.arange(k, device=truth.device)
    positive = (truth[:, None, :] == classes[None, :, None]).reshape(p * k, n)
    return RankedRows.of(scores, positive)


def macro(values: Float[Tensor, "*batch row"], num_classes: int) -> Float[Tensor, "*batch probe"]:
    """Per-probe values from class rows: the row itself for K = 2, else the mean over the
    classes where it is defined (NaN where no class is)."""
    if num_classes == 2:
        return values
    v = values.unflatten(-1, (-1, num_classes))
    ok = ~v.isnan()
    return torch.where(ok, v, 0.0).sum(-1) / ok.sum(-1)  # 0/0: NaN


def rank_metrics(
    log_probs: Float[Tensor, "probe item class"],
    truth: Int[Tensor, "probe item"],
    *,
    fpr: float = DEFAULT_FPR,
    weights: Float[Tensor, "batch item"] | None = None,
) -> dict[str, Float[Tensor, "batch probe"]]:
    """`auroc` and `recall_at_fpr` of every classification probe from its class scores
    (log-probabilities, or any per-class score monotone in them), under each weighting of the
    items (default: one weighting, all ones). NaN for a probe with a NaN score. Probes are
    scored in blocks of at most `RANK_ELEMENTS` sorted weights."""
    check_fpr(fpr)
    p, n, k = log_probs.shape
    if k < 2:
        raise ProbeConfigError(f"class scores with {k} class: AUROC needs at least two classes.")
    if weights is None:
        weights = torch.ones(1, n, dtype=torch.float64, device=log_probs.device)
    rows = 1 if k == 2 else k
    step = max(1, RANK_ELEMENTS // (weights.shape[0] * rows * max(n, 1)))
    parts = []
    for start in range(0, p, step):
        block = slice(start, start + step)
        ranked = class_rows(log_probs[block], truth[block].long())
        bad = log_probs[block].isnan().any(2).any(1)
        out = {
            "auroc": macro(weighted_auroc(ranked, weights), k),
            "recall_at_fpr": macro(weighted_recall_at_fpr(ranked, weights, fpr), k),
        }
        parts.append({m: torch.where(bad, torch.nan, v) for m, v in out.items()})
    return {m: torch.cat([part[m] for part in parts], dim=-1) for m in RANK_METRICS}


def check_fpr(fpr: float) -> None:
    """`fpr` must be a rate in [0, 1)."""
    if not 0 <= fpr < 1:
        raise ProbeConfigError(f"fpr={fpr}: give a false-positive rate in [0, 1), e.g. 0.01.")
