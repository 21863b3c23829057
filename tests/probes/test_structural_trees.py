"""Tree depths and distances from heads: a hand computation, scipy's BFS, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from probes import ProbeInputError
from probes.structural import SentenceTrees
from tests.probes.structural_data import bfs_distances, random_trees, sentence_heads

# "The chef ran to the store ." : The<-chef<-ran(root), to<-store, the<-store, store<-ran, .<-ran
HAND_HEADS = [2, 3, 0, 6, 6, 3, 3]
HAND_DEPTHS = [2, 1, 0, 2, 2, 1, 1]
HAND_DISTANCES = [
    [0, 1, 2, 4, 4, 3, 3],
    [1, 0, 1, 3, 3, 2, 2],
    [2, 1, 0, 2, 2, 1, 1],
    [4, 3, 2, 0, 2, 1, 3],
    [4, 3, 2, 2, 0, 1, 3],
    [3, 2, 1, 1, 1, 0, 2],
    [3, 2, 1, 3, 3, 2, 0],
]


def hand_trees() -> SentenceTrees:
    """The hand sentence, then a one-word sentence, then the hand sentence again."""
    heads = [*HAND_HEADS, 0, *HAND_HEADS]
    punct = torch.zeros(len(heads), dtype=torch.bool)
    return SentenceTrees(torch.tensor([7, 1, 7]), torch.tensor(heads), punct)


def test_depths_and_distances_equal_the_hand_computation() -> None:
    trees = hand_trees()
    assert trees.depths().tolist() == [*HAND_DEPTHS, 0, *HAND_DEPTHS]
    batch = trees.padded(torch.tensor([0, 1]))
    assert batch.distances()[0].tolist() == HAND_DISTANCES
    assert batch.distances()[1].tolist() == [[0] * 7] * 7  # one word, the rest padding
    assert batch.depths()[0].tolist() == HAND_DEPTHS
    flat = trees.all_distances()
    again = trees.gather_distances(flat, trees.padded(torch.tensor([2, 1])))
    assert again[0].tolist() == HAND_DISTANCES
    assert flat.shape == (7 * 7 + 1 + 7 * 7,)


def test_distances_equal_breadth_first_search_on_random_trees() -> None:
    trees = random_trees(60, seed=3, lengths=(1, 30))
    flat = trees.all_distances()
    depths = trees.depths()
    batch = trees.padded(torch.arange(trees.n_sentences))
    dist = batch.distances()
    for s in range(trees.n_sentences):
        heads = sentence_heads(trees, s)
        want = bfs_distances(heads)
        size = len(heads)
        got = dist[s, :size, :size].numpy()
        np.testing.assert_array_equal(got, want)
        start = int(trees.pair_offsets[s])
        np.testing.assert_array_equal(flat[start : start + size * size].view(size, size), want)
        root = heads.index(0)
        first = int(trees.offsets[s])
        np.testing.assert_array_equal(depths[first : first + size].numpy(), want[root])
        assert bool((dist[s, size:] == 0).all()) and bool((dist[s, :, size:] == 0).all())


def test_subset_keeps_the_chosen_sentences_in_order() -> None:
    trees = random_trees(10, seed=1)
    part = trees.subset(torch.tensor([7, 2]))
    assert part.lengths.tolist() == [int(trees.lengths[7]), int(trees.lengths[2])]
    assert part.heads.tolist() == sentence_heads(trees, 7) + sentence_heads(trees, 2)


@pytest.mark.parametrize(
    ("lengths", "heads", "message"),
    [
        ([3], [2, 0, 0], "2 roots"),
        ([3], [2, 3, 2], "0 roots"),
        ([3], [2, 0, 4], "outside its sentence"),
        ([4], [2, 1, 0, 3], "cycle"),
        ([2, 2], [0, 1, 0], "one head"),
        ([0], [], "length >= 1"),
    ],
)
def test_bad_trees_are_refused_with_the_reason(lengths, heads, message) -> None:
    with pytest.raises(ProbeInputError, match=message):
        SentenceTrees(
            torch.tensor(lengths, dtype=torch.long),
            torch.tensor(heads, dtype=torch.long),
            torch.zeros(len(heads), dtype=torch.bool),
        )
