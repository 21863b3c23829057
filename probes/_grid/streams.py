"""The random streams of training: each keyed by what identifies a probe, never by the grid.

- training order of a seed: `("subset", order_key)`, a permutation of the training items whose
  prefixes are the train masks (data fractions, MDL blocks);
- minibatch order: `("order", order_key, mask_size)`, a fresh permutation of the mask every epoch;
- dropout: `("dropout", seed, mask_size)`, one input mask per row and step, shared by the sites
  and variants of the seed. Each element's draw is a 16-bit integer: every 64-bit draw of the
  generator gives four (its 16-bit quarters, lowest first, each read as a signed integer s); an
  element is kept when `s >= round(p * 2**16) - 2**15` and scaled by `2**16 / (2**16 -
  round(p * 2**16))`, so p is used at a resolution of 2**-16 and the kept inputs keep their
  mean. (A float per element from `torch.rand` cost three times as much: the Mersenne Twister's
  draws were 6 % of a sweep.);
- initialisation: `("init", seed)` (in `linear.py`).

`order_key` is the probe's seed, or `TrainConfig.order_seed` for every seed with `shared_order`.
So a probe trained in a one-probe grid draws exactly the numbers it draws in a large grid.

Dropout masks are drawn on the training device: on CUDA from CUDA's generator (Philox), seeded
with the same keys, which gives other masks than the CPU's Mersenne Twister. A run reproduces
itself on its device; a CUDA run and a CPU run of the same grid differ by training noise (on an
H200, 130 probes after 5 epochs: test accuracies up to 4 points apart with dropout 0.2, within
0.02 points with dropout 0, weights within 2e-6; `benchmarks/bench_cuda.py`).
"""

from __future__ import annotations

import hashlib
import math

import torch
from jaxtyping import Float, Int
from torch import Tensor


def keyed_generator(*key: int | str, device: torch.device | str = "cpu") -> torch.Generator:
    """A torch generator seeded by a stable hash of `key` (independent of Python's hash seed)."""
    digest = hashlib.blake2b(repr(key).encode(), digest_size=8).digest()
    return torch.Generator(device=device).manual_seed(int.from_bytes(digest, "little") >> 1)


def training_order(train_items: Int[Tensor, " item"], order_key: int) -> Int[Tensor, " item"]:
    """The seeded shuffle of the training items; a train mask of size n is its first n items."""
    perm = torch.randperm(train_items.shape[0], generator=keyed_generator("subset", order_key))
    return train_items[perm]


class RowStreams:
    """Minibatch rows for every (mask, order key): epoch permutations, padded to whole batches.

    `members[m][r]` are the training items of mask m for order key r (their sizes equal over
    the keys); masks come largest first, so the masks still running at step t are a prefix
    `[:active(t)]`.
    """

    def __init__(
        self,
        members: list[list[Int[Tensor, " _"]]],
        order_keys: list[int],
        batch_size: int,
        device: torch.device,
    ) -> None:
        self.member_lists = members
        self.mask_sizes = [int(streams[0].numel()) for streams in members]
        self.n_streams = len(order_keys)
        self.batch_size = batch_size
        self.device = device
        self.generators = [
            [keyed_generator("order", k, n) for k in order_keys] for n in self.mask_sizes
        ]
        self.steps = [math.ceil(n / batch_size) for n in self.mask_sizes]

    def members(self, mask: int, stream: int) -> Int[Tensor, " item"]:
        """The training items of a mask for one order key."""
        return self.member_lists[mask][stream]

    def active(self, step: int) -> int:
        """How many masks (a prefix) still have a batch at `step` of the epoch."""
        return sum(1 for s in self.steps if s > step)

    def batch_sizes(self, step: int, active: int) -> list[int]:
        """Real rows in each active mask's batch at `step` (the last batch may be short)."""
        b = self.batch_size
        return [min(b, n - step * b) for n in self.mask_sizes[:active]]

    def epoch(self) -> tuple[Int[Tensor, "mask stream row"], Float[Tensor, "mask stream row"]]:
        """Rows of the next epoch, and each row's loss weight (1 / its batch's real size, 0 for
        padding), both `[mask, order key, steps * batch]`."""
        b = self.batch_size
        width = self.steps[0] * b
        rows = torch.zeros(len(self.mask_sizes), self.n_streams, width, dtype=torch.int64)
        weight = torch.zeros(rows.shape)
        for m, n in enumerate(self.mask_sizes):
            real = torch.arange(n)
            batch_real = torch.clamp(n - (real // b) * b, max=b)
            for r, gen in enumerate(self.generators[m]):
                rows[m, r, :n] = self.members(m, r)[torch.randperm(n, generator=gen)]
                weight[m, r, :n] = 1.0 / batch_real
        return rows.to(self.device), weight.to(self.device)


INT64_MIN = -(2**63)  # `random_(INT64_MIN, None)` draws all 64 bits


def keep_rule(p: float) -> tuple[int, float]:
    """(threshold, scale) of dropout probability p: an element whose signed 16-bit draw is at
    least `threshold` is kept and multiplied by `scale` (inverted dropout: 1 / P(keep))."""
    dropped = min(round(p * 2**16), 2**16 - 1)  # 16-bit levels that drop an element
    return dropped - 2**15, 2**16 / (2**16 - dropped)


class DropoutStreams:
    """Inverted-dropout keep masks per (mask, seed), each from its own keyed generator, drawn a
    chunk of steps at a time into one buffer per (mask, seed) (blocks of different (mask, seed)
    draw on different threads; the site groups of one (mask, seed) share its masks)."""

    def __init__(
        self,
        seeds: tuple[int, ...],
        mask_sizes: list[int],
        p: float,
        batch_size: int,
        dim: int,
        steps: int,
        slots: int,
        device: torch.device,
    ) -> None:
        self.p = p
        self.threshold, self.scale = keep_rule(p)
        self.generators = [
            [keyed_generator("dropout", s, n, device=device) for s in seeds] for n in mask_sizes
        ]
        # a ring of slots: later chunks are drawn while earlier ones train
        shape = (slots, len(mask_sizes), len(seeds), steps, batch_size, dim)
        self.buffer = torch.ones(shape, device=device)

    def draw(self, slot: int, m: int, s: int, sizes: list[int]) -> Tensor:
        """Keep masks `[step, batch, dim]` of (mask m, seed s) for its next `len(sizes)` steps
        (`sizes`: each step's real rows) into buffer `slot`, scaled by 1/(1-p); rows past a
        batch's real size are junk (their loss weight is 0). Per chunk: left unannotated."""
        keep = self.buffer[slot, m, s, : len(sizes)]
        if self.p == 0:
            return keep
        dim, generator = keep.shape[2], self.generators[m][s]
        # each step takes whole 64-bit words, 4 draws apiece; drawn in one call, which is faster
        # than one call per step (the generator's sequence does not depend on how it is cut)
        counts = [-(-size * dim // 4) for size in sizes]
        words = torch.empty(sum(counts), dtype=torch.int64, device=keep.device)
        bits = words.random_(INT64_MIN, None, generator=generator).view(torch.int16)
        # the leading whole batches, where they use every draw of their words, are one run of
        # bits (one copy: 406 against 476 us for the step-by-step copies of 16 UPOS-sized steps)
        b, full = keep.shape[1], 0
        while b * dim % 4 == 0 and full < len(sizes) and sizes[full] == b:
            full += 1
        if full:
            keep[:full].view(-1).copy_(bits[: full * b * dim])
        start = 4 * sum(counts[:full])
        for step in range(full, len(sizes)):
            n = sizes[step] * dim
            keep[step, : sizes[step]].copy_(bits[start : start + n].view(sizes[step], dim))
            start += 4 * counts[step]
        return keep.ge_(self.threshold).mul_(self.scale)
