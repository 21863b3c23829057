"""The structural probes' metrics (Hewitt & Manning 2019, §3), batched over probes and sentences.

- UUAS: the minimum spanning tree of the predicted distances against the minimum spanning tree of
  the gold distances, punctuation left out of both, shared undirected edges over gold edges
  summed over sentences (reporter.py `report_uuas_and_tikz`). Prim's algorithm runs on every
  (probe, sentence) at once: one argmin over the padded words per added edge.
- DSpr.: Spearman's rho between each word's predicted and gold distances to every word of its
  sentence, averaged within each sentence length, then over the lengths 5..50 present.
- Root accuracy: the share of sentences whose gold root is the least deep non-punctuation word.
- NSpr.: Spearman's rho between predicted and gold depths per sentence, averaged like DSpr.
Spearman uses average ranks for ties, as `scipy.stats.spearmanr`; a constant row gives NaN, and
a NaN propagates into its length's mean, as in the reference code (`np.mean`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import torch
from jaxtyping import Bool, Float, Int
from torch import Tensor

from probes.metric_table import metric_names
from probes.structural._trees import PaddedTrees, SentenceTrees

StructuralKind = Literal["distance", "depth"]
# (tree metric, Spearman metric) of each kind, in the order of `probes.metric_table`
METRICS = {kind: metric_names("sentences", kind) for kind in ("distance", "depth")}
SPEARMAN_LENGTHS = (5, 50)  # reporter.py: mean over sentence lengths 5..50 inclusive


def average_ranks(
    x: Float[Tensor, "*batch width"], mask: Bool[Tensor, "*batch width"]
) -> Float[Tensor, "*batch width"]:
    """1-based ranks along the last axis, ties sharing their average rank (masked entries last)."""
    x = torch.where(mask, x.double(), torch.inf)
    ordered, order = x.sort(dim=-1, stable=True)
    w = x.shape[-1]
    pos = torch.arange(w, device=x.device, dtype=torch.float64).expand_as(ordered)
    first = torch.ones_like(ordered[..., :1], dtype=torch.bool)
    new = torch.cat([first, ordered[..., 1:] != ordered[..., :-1]], dim=-1)
    start = torch.where(new, pos, 0.0).cummax(dim=-1).values
    last = torch.cat([ordered[..., :-1] != ordered[..., 1:], first], dim=-1)
    end = torch.where(last, pos, float(w)).flip(-1).cummin(dim=-1).values.flip(-1)
    return torch.empty_like(ordered).scatter_(-1, order, (start + end) / 2 + 1)


def spearman(
    pred: Float[Tensor, "*batch width"],
    gold: Float[Tensor, "*batch width"],
    mask: Bool[Tensor, "*batch width"],
) -> Float[Tensor, "*batch"]:
    """Spearman's rho along the last axis over the entries in `mask` (NaN when constant)."""
    rx, ry = average_ranks(pred, mask), average_ranks(gold, mask)
    w = mask.double()
    n = w.sum(-1, keepdim=True)
    dx = (rx - (rx * w).sum(-1, keepdim=True) / n) * w
    dy = (ry - (ry * w).sum(-1, keepdim=True) / n) * w
    sxy, sxx, syy = (dx * dy).sum(-1), (dx * dx).sum(-1), (dy * dy).sum(-1)
    ok = (sxx > 0) & (syy > 0)
    r = sxy / (sxx * syy).clamp(min=1e-300).sqrt()
    return torch.where(ok, r.clamp(-1.0, 1.0), torch.nan)


def spanning_tree_parents(
    dist: Float[Tensor, "batch width width"], keep: Bool[Tensor, "batch width"]
) -> Int[Tensor, "batch width"]:
    """Prim's minimum spanning tree over the kept words of every matrix of the batch.

    Returns each kept word's neighbour towards the tree's first word (-1 for that word and for
    words left out): the edges are `(i, parent[i])` where `parent[i] >= 0`. `dist` is
    symmetrised; equal distances are ordered by the pair `(min(i, j), max(i, j))`, which makes
    the tree unique and equal to the reference reporter's (a stable sort of the pairs, then
    union-find), also on integer gold distances, which tie a lot.
    """
    b, w = keep.shape
    key = _pair_keys((dist + dist.transpose(1, 2)) / 2)
    never = torch.iinfo(torch.int64).max
    rows = torch.arange(b, device=dist.device)
    start = keep.int().argmax(dim=-1)
    in_tree = torch.zeros(b, w, dtype=torch.bool, device=dist.device)
    in_tree[rows, start] = True
    best = key[rows, start].clone()
    towards = start[:, None].expand(b, w).clone()
    parent = torch.full((b, w), -1, dtype=torch.int64, device=dist.device)
    for _ in range(w - 1):
        value, j = best.masked_fill(in_tree | ~keep, never).min(dim=-1)
        ok = value < never
        if not bool(ok.any()):
            break
        hit = rows[ok], j[ok]
        parent[hit] = towards[hit]
        in_tree[hit] = True
        row = key[rows, j]
        closer = (row < best) & ok[:, None]
        best = torch.where(closer, row, best)
        towards = torch.where(closer, j[:, None], towards)
    return parent


def _pair_keys(dist: Float[Tensor, "batch width width"]) -> Int[Tensor, "batch width width"]:
    """Distinct integer keys in the order (distance, min(i, j), max(i, j)) per matrix."""
    b, w, _ = dist.shape
    flat = dist.reshape(b, w * w)
    ordered, order = flat.sort(dim=-1)
    first = torch.ones_like(ordered[:, :1], dtype=torch.bool)
    dense = torch.cat([first, ordered[:, 1:] != ordered[:, :-1]], dim=-1).cumsum(-1) - 1
    rank = torch.empty_like(dense).scatter_(-1, order, dense).view(b, w, w)
    pos = torch.arange(w, device=dist.device)
    pair = torch.minimum(pos[:, None], pos[None]) * w + torch.maximum(pos[:, None], pos[None])
    return rank * (w * w) + pair


def right_branching(
    trees: PaddedTrees, kind: StructuralKind
) -> Float[Tensor, "one batch width *pair"]:
    """The paper's LINEAR baseline: each word heads the next (distance |i - j|, depth i)."""
    pos = torch.arange(trees.mask.shape[1], device=trees.mask.device, dtype=torch.float32)
    pos = pos.expand_as(trees.mask)
    if kind == "depth":
        return pos[None]
    return (pos[:, :, None] - pos[:, None, :]).abs()[None]


class StructuralScorer:
    """Accumulates one kind's metrics for P probes over batches of sentences."""

    def __init__(self, kind: StructuralKind, n_probes: int, device: torch.device) -> None:
        self.kind, self.n_probes, self.device = kind, n_probes, device
        self.hits = torch.zeros(n_probes, dtype=torch.float64, device=device)
        self.total = torch.zeros((), dtype=torch.float64, device=device)
        self.rho_sum = torch.zeros(n_probes, 0, dtype=torch.float64, device=device)
        self.rho_count = torch.zeros(0, dtype=torch.float64, device=device)

    def add(self, pred: Float[Tensor, "probe batch width *pair"], trees: PaddedTrees) -> None:
        """Score predictions `[probe, batch, width(, width)]` for the padded gold `trees`."""
        keep = trees.mask & ~trees.punct
        p, (b, w) = pred.shape[0], trees.mask.shape
        if self.kind == "distance":
            gold = trees.distances()
            gold_parent = spanning_tree_parents(gold, keep)
            adjacent = torch.zeros(b, w + 1, w + 1, dtype=torch.bool, device=gold.device)
            bi, wi = torch.meshgrid(
                torch.arange(b, device=gold.device),
                torch.arange(w, device=gold.device),
                indexing="ij",
            )
            adjacent[bi, wi, gold_parent] = True  # parent -1 lands in the spare last column
            adjacent = (adjacent | adjacent.transpose(1, 2))[:, :w, : w + 1]
            flat = pred.reshape(p * b, w, w)
            pred_parent = spanning_tree_parents(flat, keep.repeat(p, 1)).view(p, b, w)
            shared = adjacent[bi[None], wi[None], pred_parent] & (pred_parent >= 0)
            self.hits += shared.sum(dim=(1, 2)).double()
            self.total += (gold_parent >= 0).sum().double()
            pair = trees.mask[:, :, None] & trees.mask[:, None, :]
            rho = spearman(pred, gold.expand_as(pred), pair.expand_as(pred))  # [probe, b, w]
            lengths = trees.lengths[:, None].expand(b, w)[trees.mask]
            self._add_rho(rho[:, trees.mask], lengths)
        else:
            gold = trees.depths()
            root = (trees.heads == 0) & trees.mask
            masked = pred.masked_fill(~keep, torch.inf)
            guess = torch.where(
                keep.any(-1), masked.argmin(-1), pred.masked_fill(~trees.mask, torch.inf).argmin(-1)
            )
            self.hits += _root_hits(root, guess)
            self.total += b
            rho = spearman(pred, gold.expand_as(pred), trees.mask.expand_as(pred))  # [probe, b]
            self._add_rho(rho, trees.lengths)

    def _add_rho(self, rho: Float[Tensor, "probe row"], lengths: Int[Tensor, " row"]) -> None:
        top = int(lengths.max()) + 1 if lengths.numel() else 0
        if top > self.rho_count.shape[0]:
            grow = top - self.rho_count.shape[0]
            self.rho_sum = torch.nn.functional.pad(self.rho_sum, (0, grow))
            self.rho_count = torch.nn.functional.pad(self.rho_count, (0, grow))
        lengths = lengths.to(self.device)
        self.rho_sum.index_add_(1, lengths, rho.double())
        self.rho_count.index_add_(0, lengths, torch.ones_like(lengths, dtype=torch.float64))

    def result(self) -> dict[str, Float[Tensor, " probe"]]:
        """The kind's two metrics per probe (NaN where no sentence qualifies)."""
        lo, hi = SPEARMAN_LENGTHS
        counts = self.rho_count[lo : hi + 1]
        used = counts > 0
        by_length = self.rho_sum[:, lo : hi + 1][:, used] / counts[used]
        rho = by_length.mean(dim=1) if bool(used.any()) else torch.full_like(self.hits, torch.nan)
        share = self.hits / self.total if float(self.total) > 0 else self.hits * torch.nan
        first, second = METRICS[self.kind]
        return {first: share.cpu(), second: rho.cpu()}


def _root_hits(root: Bool[Tensor, "batch width"], guess: Int[Tensor, "probe batch"]) -> Tensor:
    """Per probe, how many sentences' guessed word is the gold root."""
    batch = torch.arange(root.shape[0], device=root.device)
    return root[batch[None, :], guess].sum(-1).double()


def score_sentences(
    predict: Callable[[PaddedTrees], Float[Tensor, "probe batch width *pair"]],
    trees: SentenceTrees,
    sentences: Int[Tensor, " chosen"],
    kind: StructuralKind,
    n_probes: int,
    *,
    device: torch.device | str = "cpu",
    chunk: int = 64,
) -> dict[str, Float[Tensor, " probe"]]:
    """Metrics of `predict` on `sentences`, scored in chunks of similar length."""
    dev = torch.device(device)
    scorer = StructuralScorer(kind, n_probes, dev)
    for part in length_chunks(trees, sentences, chunk):
        batch = trees.padded(part).to(dev)
        scorer.add(predict(batch), batch)
    return scorer.result()


def length_chunks(
    trees: SentenceTrees, sentences: Int[Tensor, " chosen"], chunk: int
) -> Sequence[Int[Tensor, " part"]]:
    """`sentences` sorted by length and cut into chunks (less padding per chunk)."""
    order = trees.lengths[sentences].argsort(stable=True)
    return list(sentences[order].split(chunk))
