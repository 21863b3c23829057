"""Train masks of a grid: which items each (mask, seed) trains on, and picks its epoch on.

Two kinds (see `ProbeGrid`):
- fractions (and MDL blocks): prefixes of one seeded shuffle of the train split per order key;
- explicit masks: boolean item sets `[mask, item]` or `[mask, seed, item]`, optionally with
  per-mask dev sets. Each explicit set is shuffled by the same keyed stream a one-mask call on
  that set would use (`("subset", order_key)`), so a mask of a grid trains exactly as
  `fit_probes` on the splits `train = mask` alone.

`MaskPlan` is the resolved form the trainer and the evaluator read, in layout order (largest
mask first).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from jaxtyping import Bool, Int
from torch import Tensor

from probes._grid.streams import training_order
from probes.errors import ProbeConfigError, ProbeInputError
from probes.mdl import prefix_size
from probes.splits import DEV, TEST, TRAIN


def _as_masks(masks: Tensor | np.ndarray, name: str, n_seeds: int) -> Tensor:
    tensor = torch.as_tensor(masks).cpu()
    if tensor.dtype != torch.bool or tensor.ndim not in (2, 3):
        raise ProbeConfigError(
            f"ProbeGrid.{name}: got a {tensor.dtype} tensor of shape {tuple(tensor.shape)}; give"
            " booleans [mask, item] or [mask, seed, item]."
        )
    if tensor.ndim == 3 and tensor.shape[1] != n_seeds:
        raise ProbeConfigError(
            f"ProbeGrid.{name}: {tensor.shape[1]} seed rows for {n_seeds} seeds; give one row per"
            " seed of the grid, or [mask, item] masks shared by all seeds."
        )
    if tensor.shape[0] == 0:
        raise ProbeConfigError(f"ProbeGrid.{name}: no mask; give at least one.")
    return tensor


def check_explicit_masks(
    train: Tensor | np.ndarray | None, dev: Tensor | np.ndarray | None, n_seeds: int
) -> tuple[Tensor | None, Tensor | None]:
    """Boolean tensors of `ProbeGrid.train_masks` / `dev_masks`, checked for shape and sizes."""
    if train is None:
        if dev is not None:
            raise ProbeConfigError("ProbeGrid.dev_masks needs train_masks of the same shape.")
        return None, None
    train_t = _as_masks(train, "train_masks", n_seeds)
    sizes = train_t.sum(dim=-1)
    if train_t.ndim == 3 and bool((sizes != sizes[:, :1]).any()):
        bad = int((sizes != sizes[:, :1]).any(dim=1).nonzero()[0])
        raise ProbeConfigError(
            f"ProbeGrid.train_masks: mask {bad} holds {sizes[bad].tolist()} items for its seeds;"
            " the seeds of a mask train on equally many items (one step schedule), so give"
            " equal-sized sets (e.g. the same N per label) or separate masks."
        )
    if bool((sizes == 0).any()):
        raise ProbeConfigError(
            f"ProbeGrid.train_masks: mask {int((sizes == 0).nonzero()[0][0])} is empty; every"
            " mask needs training items."
        )
    if dev is None:
        return train_t, None
    dev_t = _as_masks(dev, "dev_masks", n_seeds)
    if dev_t.shape != train_t.shape:
        raise ProbeConfigError(
            f"ProbeGrid.dev_masks: shape {tuple(dev_t.shape)} differs from train_masks'"
            f" {tuple(train_t.shape)}; give one dev set per train set."
        )
    return train_t, dev_t


def per_seed(masks: Tensor) -> Bool[Tensor, "mask seed_or_1 item"]:
    """`[mask, item]` as `[mask, 1, item]`; `[mask, seed, item]` unchanged."""
    return masks[:, None] if masks.ndim == 2 else masks


def explicit_mask_order(masks: Tensor) -> tuple[float, ...]:
    """Positions of the explicit masks, largest first (ties in the given order)."""
    sizes = per_seed(masks)[:, 0].sum(dim=-1).tolist()
    order = sorted(range(len(sizes)), key=lambda m: (-sizes[m], m))
    return tuple(float(m) for m in order)


@dataclass
class MaskPlan:
    """Resolved masks, in layout order.

    members[m][r]: the training items of mask m for order stream r, in the stream's shuffled
    order; sizes[m]: their count (equal over streams); dev: `[mask, seed, item]` dev items per
    mask and seed, or None for the splits' dev items; orders[r]: stream r's shuffled train split
    (fraction masks are its prefixes; None for explicit masks).
    """

    members: list[list[Int[Tensor, " _"]]]
    sizes: list[int]
    dev: Bool[Tensor, "mask seed item"] | None
    orders: list[Int[Tensor, " _"]] | None

    def train_membership(self, n_items: int, n_seeds: int, shared: bool) -> Tensor:
        """`[mask, seed, item]`: whether an item is in the (mask, seed)'s training items."""
        out = torch.zeros(len(self.sizes), n_seeds, n_items, dtype=torch.bool)
        for m, streams in enumerate(self.members):
            for s in range(n_seeds):
                out[m, s, streams[0 if shared else s]] = True
        return out


def plan_masks(
    explicit: Tensor | None,
    explicit_dev: Tensor | None,
    layout_masks: tuple[float, ...],
    codes: Int[Tensor, " item"],
    order_keys: list[int],
    n_seeds: int,
) -> MaskPlan:
    """The training items of every (mask, order stream) and the dev items of every mask."""
    if explicit is None:
        train_items = (codes == TRAIN).nonzero().flatten()
        orders = [training_order(train_items, key) for key in order_keys]
        sizes = [prefix_size(f, len(train_items)) for f in layout_masks]
        members = [[order[:n] for order in orders] for n in sizes]
        return MaskPlan(members, sizes, None, orders)
    chosen = [int(m) for m in layout_masks]
    train = per_seed(explicit)[chosen]
    dev = per_seed(explicit_dev)[chosen] if explicit_dev is not None else None
    _check_against_splits(train, dev, codes, [int(m) for m in layout_masks])
    if len(order_keys) == 1 and n_seeds > 1 and train.shape[1] > 1:
        raise ProbeConfigError(
            "TrainConfig.shared_order=True reads one minibatch order for all seeds, so give"
            " ProbeGrid.train_masks as [mask, item] (one set for every seed)."
        )
    members = [
        [
            training_order(train[m, min(r, train.shape[1] - 1)].nonzero().flatten(), key)
            for r, key in enumerate(order_keys)
        ]
        for m in range(train.shape[0])
    ]
    sizes = [int(streams[0].numel()) for streams in members]
    if dev is not None:
        dev = dev.expand(-1, n_seeds, -1)
    return MaskPlan(members, sizes, dev, None)


def _check_against_splits(
    train: Tensor, dev: Tensor | None, codes: Int[Tensor, " item"], positions: list[int]
) -> None:
    """Mask items must be train items of the splits (or, with dev masks, train or dev items,
    a mask's train and dev sets disjoint); every dev mask non-empty."""
    if train.shape[-1] != codes.shape[0]:
        raise ProbeInputError(
            f"ProbeGrid.train_masks: masks over {train.shape[-1]} items for {codes.shape[0]}"
            " items; give one column per item."
        )
    allowed = codes == TRAIN if dev is None else (codes == TRAIN) | (codes == DEV)
    role = "train items" if dev is None else "train or dev items"
    for name, masks in (("train_masks", train), ("dev_masks", dev)):
        if masks is None:
            continue
        outside = masks & ~allowed
        if bool(outside.any()):
            m = int(outside.any(dim=(1, 2)).nonzero()[0])
            test = int((masks[m] & (codes == TEST)).sum())
            raise ProbeInputError(
                f"ProbeGrid.{name}: mask {positions[m]} holds {int(outside[m].any(0).sum())}"
                f" items that are not {role} of the splits ({test} of them test items); give"
                " masks inside the splits' train items, or dev_masks to let the masks decide"
                " train and dev."
            )
    if dev is not None:
        overlap = train & dev
        if bool(overlap.any()):
            m = int(overlap.any(dim=(1, 2)).nonzero()[0])
            raise ProbeInputError(
                f"ProbeGrid.dev_masks: mask {positions[m]} has items in both its train and dev"
                " sets; carve the dev items out of the training items."
            )
        empty = ~dev.any(dim=-1)
        if bool(empty.any()):
            m = int(empty.any(dim=1).nonzero()[0])
            raise ProbeInputError(
                f"ProbeGrid.dev_masks: mask {positions[m]} has no dev item; the best epoch is"
                " chosen on dev."
            )
