"""UUAS, DSpr., root accuracy and NSpr. against scipy and a plain rendering of the paper's
reporter (reporter.py of john-hewitt/structural-probes), on hand-made and random trees."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
import torch
from scipy.sparse.csgraph import minimum_spanning_tree
from scipy.stats import rankdata, spearmanr

from probes.structural import (
    SentenceTrees,
    right_branching,
    score_sentences,
    spanning_tree_parents,
    spearman,
)
from probes.structural._metrics import average_ranks
from tests.probes.structural_data import bfs_distances, random_trees, sentence_heads
from tests.probes.test_structural_trees import HAND_HEADS


def test_average_ranks_and_spearman_equal_scipy_with_ties_and_padding() -> None:
    gen = torch.Generator().manual_seed(0)
    x = torch.randint(0, 5, (40, 12), generator=gen).double()
    y = torch.randn(40, 12, generator=gen).double()
    sizes = torch.randint(2, 13, (40,), generator=gen)
    mask = torch.arange(12)[None] < sizes[:, None]
    ranks = average_ranks(x, mask)
    rho = spearman(x, y, mask)
    for row in range(40):
        n = int(sizes[row])
        np.testing.assert_allclose(ranks[row, :n].numpy(), rankdata(x[row, :n].numpy()))
        want = spearmanr(x[row, :n].numpy(), y[row, :n].numpy()).statistic
        if np.isnan(want):
            assert torch.isnan(rho[row])
        else:
            assert float(rho[row]) == pytest.approx(want, abs=1e-12)


def test_spearman_of_a_constant_row_is_nan() -> None:
    mask = torch.ones(1, 4, dtype=torch.bool)
    rho = spearman(torch.ones(1, 4), torch.arange(4.0)[None], mask)
    assert torch.isnan(rho).all()


def test_prim_spanning_trees_equal_scipy_minimum_spanning_tree() -> None:
    gen = torch.Generator().manual_seed(1)
    b, w = 30, 15
    dist = torch.rand(b, w, w, generator=gen, dtype=torch.float64) + 0.01
    dist = dist + dist.transpose(1, 2)
    keep = torch.rand(b, w, generator=gen) < 0.8
    parents = spanning_tree_parents(dist, keep)
    for i in range(b):
        kept = keep[i].nonzero().flatten().numpy()
        sub = dist[i].numpy()[np.ix_(kept, kept)]
        tree = minimum_spanning_tree(sub).tocoo()
        want = {frozenset((int(kept[r]), int(kept[c]))) for r, c in zip(tree.row, tree.col)}
        got = {frozenset((j, int(p))) for j, p in enumerate(parents[i].tolist()) if p >= 0}
        assert got == want
        assert all(int(parents[i, j]) == -1 for j in range(w) if not keep[i, j])


def gold_predictor(trees: SentenceTrees, kind: str):
    def predict(batch):
        return (batch.distances() if kind == "distance" else batch.depths())[None]

    return predict


def test_gold_distances_and_depths_score_perfectly() -> None:
    some = random_trees(50, seed=2, lengths=(2, 40))
    trees = SentenceTrees(some.lengths, some.heads, some.punct & (some.heads != 0))  # root: a word
    chosen = torch.arange(trees.n_sentences)
    dist = score_sentences(gold_predictor(trees, "distance"), trees, chosen, "distance", 1)
    depth = score_sentences(gold_predictor(trees, "depth"), trees, chosen, "depth", 1)
    assert float(dist["uuas"][0]) == 1.0
    assert float(dist["dspr"][0]) == pytest.approx(1.0)
    assert float(depth["nspr"][0]) == pytest.approx(1.0)
    assert float(depth["root_acc"][0]) == 1.0


def test_right_branching_on_the_hand_sentence_equals_the_hand_computation() -> None:
    punct = torch.tensor([False] * 6 + [True])  # the final "."
    trees = SentenceTrees(torch.tensor([7]), torch.tensor(HAND_HEADS), punct)
    one = torch.tensor([0])
    dist = score_sentences(lambda b: right_branching(b, "distance"), trees, one, "distance", 1)
    depth = score_sentences(lambda b: right_branching(b, "depth"), trees, one, "depth", 1)
    # gold edges without "." : The-chef chef-ran ran-store to-store the-store; the chain over
    # the six words shares The-chef, chef-ran, the-store: 3 of 5
    assert float(dist["uuas"][0]) == pytest.approx(3 / 5)
    assert float(depth["root_acc"][0]) == 0.0  # the chain's root is "The", the gold root "ran"
    gold = bfs_distances(HAND_HEADS)
    rows = [spearmanr(np.abs(np.arange(7) - i), gold[i]).statistic for i in range(7)]
    assert float(dist["dspr"][0]) == pytest.approx(np.mean(rows))
    want = spearmanr(np.arange(7), gold[HAND_HEADS.index(0)]).statistic
    assert float(depth["nspr"][0]) == pytest.approx(want)


def test_right_branching_chains_score_one() -> None:
    lengths = torch.tensor([6, 9])
    heads = torch.tensor([0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7, 8])
    trees = SentenceTrees(lengths, heads, torch.zeros(15, dtype=torch.bool))
    both = torch.arange(2)
    dist = score_sentences(lambda b: right_branching(b, "distance"), trees, both, "distance", 1)
    depth = score_sentences(lambda b: right_branching(b, "depth"), trees, both, "depth", 1)
    assert float(dist["uuas"][0]) == 1.0 and float(depth["root_acc"][0]) == 1.0


def kruskal_edges(matrix: np.ndarray, skip: list[bool]) -> list[tuple[int, int]]:
    """The reference reporter's spanning tree: pairs sorted by distance, union-find."""
    pairs = {
        (i, j): matrix[i, j]
        for i in range(len(matrix))
        for j in range(len(matrix))
        if not skip[i] and not skip[j]
    }
    parent = list(range(len(matrix)))

    def find(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    edges = []
    for (i, j), _ in sorted(pairs.items(), key=lambda kv: kv[1]):
        if find(i) != find(j):
            parent[find(i)] = j
            edges.append((i, j))
    return edges


def reporter(preds: list[np.ndarray], trees: SentenceTrees, kind: str) -> dict[str, float]:
    """UUAS / DSpr. or root accuracy / NSpr. sentence by sentence, as reporter.py does."""
    by_length: dict[int, list[float]] = defaultdict(list)
    hits = total = 0
    for s, pred in enumerate(preds):
        heads = sentence_heads(trees, s)
        start = int(trees.offsets[s])
        skip = trees.punct[start : start + len(heads)].tolist()
        gold = bfs_distances(heads)
        if kind == "distance":
            gold_edges = {tuple(sorted(e)) for e in kruskal_edges(gold, skip)}
            pred_edges = {tuple(sorted(e)) for e in kruskal_edges(pred, skip)}
            hits += len(gold_edges & pred_edges)
            total += len(gold_edges)
            by_length[len(heads)] += [spearmanr(p, g).statistic for p, g in zip(pred, gold)]
        else:
            depth = gold[heads.index(0)]
            order = [i for i in np.argsort(pred, kind="stable") if not skip[i]]
            guess = order[0] if order else int(np.argmin(pred))
            hits += int(depth[guess] == 0)
            total += 1
            by_length[len(heads)].append(spearmanr(pred, depth).statistic)
    means = [np.mean(by_length[n]) for n in range(5, 51) if n in by_length]
    first, second = ("uuas", "dspr") if kind == "distance" else ("root_acc", "nspr")
    return {first: hits / total, second: float(np.mean(means))}


@pytest.mark.parametrize("kind", ["distance", "depth"])
def test_metrics_equal_the_reference_reporter_on_random_predictions(kind: str) -> None:
    trees = random_trees(80, seed=4, lengths=(1, 30), punct=0.2)
    gen = torch.Generator().manual_seed(5)
    preds = []
    for s in range(trees.n_sentences):
        n = int(trees.lengths[s])
        if kind == "distance":
            v = torch.randn(n, 3, generator=gen, dtype=torch.float64)
            preds.append(torch.cdist(v, v).square().numpy())
        else:
            preds.append(torch.rand(n, generator=gen, dtype=torch.float64).numpy())

    def predict(batch):
        w = batch.mask.shape[1]
        out = torch.zeros(len(batch.sentences), *((w, w) if kind == "distance" else (w,)))
        for row, s in enumerate(batch.sentences.tolist()):
            n = preds[s].shape[0]
            out[row][(slice(0, n),) * preds[s].ndim] = torch.from_numpy(preds[s])
        return out[None].double()

    got = score_sentences(predict, trees, torch.arange(trees.n_sentences), kind, 1, chunk=7)
    want = reporter(preds, trees, kind)
    for name, value in want.items():
        assert float(got[name][0]) == pytest.approx(value, abs=1e-9), name
