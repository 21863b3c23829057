"""Dependency trees of many sentences as flat tensors; tree depths and pairwise tree distances.

A treebank of S sentences with N words in all is `SentenceTrees`: `lengths [sentence]`,
`heads [word]` (1-based within the sentence, 0 for the root, as CoNLL-U's HEAD column) and
`punct [word]`. Depths come from pointer doubling on the flat head array (log2 of the longest
sentence steps for all words at once). Distances of a padded batch come from the ancestor matrix
`A[i, k] = 1` when k is i or one of its ancestors (repeated squaring of `I + parent`, one batched
matmul per step): the common ancestors of i and j are the path from the root down to their
lowest common ancestor, so `(A A^T)[i, j] = depth(lca) + 1` and
`d(i, j) = depth_i + depth_j - 2 depth(lca)` (Hewitt & Manning 2019, §2: path length in the tree).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from jaxtyping import Bool, Float, Int
from torch import Tensor

from probes.errors import ProbeInputError, TreeError


@dataclass(frozen=True)
class SentenceTrees:
    """Gold trees of S sentences: `lengths [sentence]`, `heads [word]`, `punct [word]`.

    Words are in sentence order, sentence after sentence (the order of the features' items).
    Every sentence has exactly one root (head 0) and no cycle; `punct` marks the words the
    paper leaves out of the spanning trees and of the root prediction (punctuation).
    """

    lengths: Int[Tensor, " sentence"]
    heads: Int[Tensor, " word"]
    punct: Bool[Tensor, " word"]

    def __post_init__(self) -> None:
        lengths = torch.as_tensor(self.lengths, dtype=torch.int64).cpu()
        heads = torch.as_tensor(self.heads, dtype=torch.int64).cpu()
        punct = torch.as_tensor(self.punct, dtype=torch.bool).cpu()
        object.__setattr__(self, "lengths", lengths)
        object.__setattr__(self, "heads", heads)
        object.__setattr__(self, "punct", punct)
        if lengths.ndim != 1 or lengths.numel() == 0 or bool((lengths < 1).any()):
            raise ProbeInputError(
                "SentenceTrees.lengths: give one length >= 1 per sentence (a 1-D tensor)."
            )
        n = int(lengths.sum())
        if heads.shape != (n,) or punct.shape != (n,):
            raise ProbeInputError(
                f"SentenceTrees: lengths sum to {n} words but heads has shape"
                f" {tuple(heads.shape)} and punct {tuple(punct.shape)}; give one head and one"
                " punctuation flag per word, sentence after sentence."
            )
        own = torch.repeat_interleave(lengths, lengths)
        bad = (heads < 0) | (heads > own)
        if bool(bad.any()):
            word = int(bad.nonzero()[0])
            raise ProbeInputError(
                f"SentenceTrees.heads[{word}] = {int(heads[word])} lies outside its sentence"
                f" (length {int(own[word])}); heads are 1-based word indices, 0 for the root."
            )
        roots = torch.zeros(len(lengths), dtype=torch.int64)
        roots.index_add_(0, self.sentence_of, (heads == 0).long())
        if bool((roots != 1).any()):
            s = int((roots != 1).nonzero()[0])
            raise TreeError(
                s, f"has {int(roots[s])} roots (head 0); a dependency tree has exactly one"
            )
        _, top = _pointer_doubling(self.parents, self.lengths)
        cyclic = heads[top] != 0
        if bool(cyclic.any()):
            word = int(cyclic.nonzero()[0])
            s = int(self.sentence_of[word])
            raise TreeError(
                s,
                f"has a cycle: word {word - int(self.offsets[s]) + 1} never reaches the root"
                " following its heads",
            )

    @property
    def n_sentences(self) -> int:
        """S."""
        return int(self.lengths.shape[0])

    @property
    def offsets(self) -> Int[Tensor, " sentence"]:
        """Index of each sentence's first word."""
        return torch.cumsum(self.lengths, 0) - self.lengths

    @property
    def sentence_of(self) -> Int[Tensor, " word"]:
        """The sentence of each word."""
        return torch.repeat_interleave(torch.arange(self.n_sentences), self.lengths)

    @property
    def parents(self) -> Int[Tensor, " word"]:
        """Flat index of each word's head; a root points at itself."""
        start = torch.repeat_interleave(self.offsets, self.lengths)
        flat = start + self.heads - 1
        return torch.where(self.heads == 0, torch.arange(len(self.heads)), flat)

    def depths(self) -> Int[Tensor, " word"]:
        """Edges from each word up to the root (the root has depth 0)."""
        depth, _ = _pointer_doubling(self.parents, self.lengths)
        return depth

    def subset(self, sentences: Int[Tensor, " chosen"]) -> SentenceTrees:
        """The trees of `sentences`, in that order."""
        index, mask = self.word_index(sentences)
        words = index[mask]
        return SentenceTrees(self.lengths[sentences], self.heads[words], self.punct[words])

    def word_index(
        self, sentences: Int[Tensor, " batch"]
    ) -> tuple[Int[Tensor, "batch width"], Bool[Tensor, "batch width"]]:
        """Flat word indices of `sentences`, padded to the longest (0 where `mask` is False)."""
        lengths = self.lengths[sentences.cpu()]
        width = int(lengths.max()) if len(lengths) else 0
        pos = torch.arange(width)
        mask = pos[None, :] < lengths[:, None]
        index = torch.where(mask, self.offsets[sentences.cpu()][:, None] + pos, 0)
        return index, mask

    @property
    def pair_offsets(self) -> Int[Tensor, " sentence"]:
        """Index of each sentence's first word pair in `all_distances` (row-major pairs)."""
        squares = self.lengths * self.lengths
        return torch.cumsum(squares, 0) - squares

    def all_distances(self, chunk: int = 256) -> Float[Tensor, " pair"]:
        """Every sentence's distance matrix, flattened row-major, sentence after sentence."""
        out = torch.empty(int((self.lengths * self.lengths).sum()))
        order = self.lengths.argsort(stable=True)
        for part in order.split(chunk):
            batch = self.padded(part)
            dist, w = batch.distances(), batch.mask.shape[1]
            pos = torch.arange(w)
            inside = batch.mask[:, :, None] & batch.mask[:, None, :]
            lengths = batch.lengths[:, None, None]
            at = self.pair_offsets[part][:, None, None] + pos[:, None] * lengths + pos[None, None]
            out[at[inside]] = dist[inside]
        return out

    def gather_distances(
        self, flat: Float[Tensor, " pair"], batch: PaddedTrees
    ) -> Float[Tensor, "batch width width"]:
        """The gold distance matrices of `batch` from `all_distances()` (0 on padding)."""
        w = batch.mask.shape[1]
        pos = torch.arange(w, device=flat.device)
        lengths = batch.lengths.to(flat.device)[:, None, None]
        first = self.pair_offsets.to(flat.device)[batch.sentences.to(flat.device)]
        at = first[:, None, None] + pos[:, None] * lengths + pos[None, None]
        inside = (batch.mask[:, :, None] & batch.mask[:, None, :]).to(flat.device)
        return torch.where(inside, flat[at.where(inside, 0)], 0.0)

    def padded(self, sentences: Int[Tensor, " batch"]) -> PaddedTrees:
        """Heads, punctuation and masks of `sentences` padded to the longest one."""
        index, mask = self.word_index(sentences)
        heads = torch.where(mask, self.heads[index], 0)
        punct = self.punct[index] & mask
        lengths = self.lengths[sentences.cpu()]
        return PaddedTrees(index, mask, heads, punct, lengths, sentences.cpu())


@dataclass(frozen=True)
class PaddedTrees:
    """A batch of sentences padded to `width` words."""

    index: Int[Tensor, "batch width"]
    mask: Bool[Tensor, "batch width"]
    heads: Int[Tensor, "batch width"]
    punct: Bool[Tensor, "batch width"]
    lengths: Int[Tensor, " batch"]
    sentences: Int[Tensor, " batch"]

    def to(self, device: torch.device) -> PaddedTrees:
        """The same batch on `device`."""
        fields = (self.index, self.mask, self.heads, self.punct, self.lengths, self.sentences)
        return PaddedTrees(*(t.to(device) for t in fields))

    def ancestors(self) -> Float[Tensor, "batch width width"]:
        """`A[b, i, k] = 1` when word k is word i or an ancestor of it (0 on padding)."""
        b, w = self.heads.shape
        device = self.heads.device
        eye = torch.eye(w, device=device).expand(b, w, w)
        has_head = (self.heads > 0) & self.mask
        parent = torch.zeros(b, w, w, device=device)
        rows = has_head.nonzero(as_tuple=True)
        parent[rows[0], rows[1], self.heads[rows] - 1] = 1.0
        reach = eye + parent
        for _ in range(max(1, math.ceil(math.log2(max(w, 2))))):
            reach = (reach @ reach).clamp_(max=1.0)
        return reach * (self.mask[:, :, None] & self.mask[:, None, :])

    def depths(self) -> Float[Tensor, "batch width"]:
        """Tree depth of every word (0 on padding)."""
        return (self.ancestors().sum(-1) - 1.0).clamp(min=0) * self.mask

    def distances(self) -> Float[Tensor, "batch width width"]:
        """Path length in the tree between every pair of words (0 on padding)."""
        anc = self.ancestors()
        depth = anc.sum(-1) - 1.0
        common = anc @ anc.transpose(1, 2)
        dist = depth[:, :, None] + depth[:, None, :] - 2.0 * (common - 1.0)
        return dist * (self.mask[:, :, None] & self.mask[:, None, :])


def _pointer_doubling(
    parents: Int[Tensor, " word"], lengths: Int[Tensor, " sentence"]
) -> tuple[Int[Tensor, " word"], Int[Tensor, " word"]]:
    """(depth, the word reached at the top) by doubling jumps up the heads."""
    up = parents.clone()
    depth = (up != torch.arange(len(up))).long()
    longest = int(lengths.max())
    for _ in range(max(1, math.ceil(math.log2(max(longest, 2)))) + 1):
        depth = depth + depth[up]
        up = up[up]
    return depth, up
