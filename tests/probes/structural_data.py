"""Random dependency trees and features that embed them, for the structural-probe tests."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path
from torch import Tensor

from probes.structural._trees import SentenceTrees


def random_heads(length: int, gen: torch.Generator) -> list[int]:
    """A uniformly attached random tree over `length` words (1-based heads, 0 for the root)."""
    order = torch.randperm(length, generator=gen).tolist()
    heads = [0] * length
    for k, word in enumerate(order[1:], start=1):
        heads[word] = order[int(torch.randint(0, k, (1,), generator=gen))] + 1
    return heads


def random_trees(
    n_sentences: int, seed: int = 0, lengths: tuple[int, int] = (1, 20), punct: float = 0.15
) -> SentenceTrees:
    """Random trees with random punctuation flags."""
    gen = torch.Generator().manual_seed(seed)
    sizes = torch.randint(lengths[0], lengths[1] + 1, (n_sentences,), generator=gen)
    heads = [h for size in sizes.tolist() for h in random_heads(size, gen)]
    flags = torch.rand(len(heads), generator=gen) < punct
    return SentenceTrees(sizes, torch.tensor(heads), flags)


def bfs_distances(heads: list[int]) -> np.ndarray:
    """Path lengths of the undirected tree, by scipy's breadth-first shortest paths."""
    n = len(heads)
    rows = [i for i, h in enumerate(heads) if h > 0]
    cols = [heads[i] - 1 for i in rows]
    graph = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    return shortest_path(graph, directed=False, unweighted=True)


def sentence_heads(trees: SentenceTrees, s: int) -> list[int]:
    """The heads of sentence `s`."""
    start = int(trees.offsets[s])
    return trees.heads[start : start + int(trees.lengths[s])].tolist()


@dataclass
class EmbeddedTrees:
    """Features `[word, site, dim]`: site 0 noise, site 1 the trees' Pythagorean embedding."""

    trees: SentenceTrees
    feats: Tensor
    splits: Tensor


def embedded_trees(n_sentences: int = 90, seed: int = 0, noise: float = 0.05) -> EmbeddedTrees:
    """Word i's vector sums one unit vector per edge on its path to the root, so squared
    distances are tree distances and squared norms are depths (Hewitt & Manning 2019, §2)."""
    trees = random_trees(n_sentences, seed, lengths=(3, 12), punct=0.1)
    width = int(trees.lengths.max())
    gen = torch.Generator().manual_seed(seed + 1)
    rows = []
    for s in range(trees.n_sentences):
        batch = trees.padded(torch.tensor([s]))
        anc = batch.ancestors()[0]
        size = int(trees.lengths[s])
        root = sentence_heads(trees, s).index(0)
        anc[:, root] = 0.0
        rows.append(torch.nn.functional.pad(anc[:size, :size], (0, width - size)))
    signal = torch.cat(rows)
    feats = torch.stack([torch.randn(signal.shape, generator=gen), signal], dim=1)
    feats[:, 1] += noise * torch.randn(signal.shape, generator=gen)
    splits = torch.zeros(n_sentences, dtype=torch.long)
    splits[n_sentences // 2 : 3 * n_sentences // 4] = 1
    splits[3 * n_sentences // 4 :] = 2
    return EmbeddedTrees(trees, feats, splits)
