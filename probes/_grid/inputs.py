"""Checks and normal forms of what a caller passes in: features, targets, control-task keys."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from jaxtyping import Bool, Float, Int, Shaped
from torch import Tensor

from lingprobe.devices import checked_device
from probes.errors import ClassAbsentFromTrainWarning, ProbeInputError
from probes.splits import SPLIT_NAMES, TRAIN

TargetKind = Literal["classification", "multilabel", "regression"]
CHECK_BYTES = 1 << 26  # bytes of features checked per block by `check_features`
# Without num_classes, ids 0..max are the classes: above this many, ids of which fewer than half
# name an item are refused as sparse (one outlier id would make a probe of mostly empty classes).
SPARSE_CLASSES = 64


@dataclass(frozen=True)
class Targets:
    """Targets in normal form.

    classification: int64 class ids `[item]`; multilabel: float 0/1 `[item, class]`;
    regression: float `[item]`. `num_classes` is the probe's output width (1 for regression).
    """

    kind: TargetKind
    values: Shaped[Tensor, " item *label"]
    num_classes: int


def check_features(feats: Tensor, name: str = "feats", ndim: int = 3) -> None:
    """Raise `ProbeInputError` unless `feats` is a finite floating tensor with `ndim` axes."""
    if not isinstance(feats, Tensor) or not feats.is_floating_point() or feats.ndim != ndim:
        shape = tuple(feats.shape) if isinstance(feats, Tensor) else type(feats).__name__
        raise ProbeInputError(
            f"{name}: got {shape}; give a floating torch tensor with {ndim} axes"
            f" ({'item site dim' if ndim == 3 else 'site item dim'})."
        )
    # Per block of rows, one cheap pass first (NaN and inf survive a sum; a half-precision sum
    # may also overflow), the exact check only where it fails: no copy of the whole features.
    bad, first = 0, None
    rows = max(1, CHECK_BYTES // max(1, feats[:1].numel() * feats.element_size()))
    for start in range(0, feats.shape[0], rows):
        block = feats[start : start + rows]
        if bool(torch.isfinite(block.sum(dim=tuple(range(1, ndim)))).all()):
            continue
        wrong = ~torch.isfinite(block)
        if first is None and bool(wrong.any()):
            hit = wrong.nonzero()[0].tolist()
            first = (start + hit[0], *hit[1:])
        bad += int(wrong.sum())
    if bad:
        raise ProbeInputError(
            f"{name}: {bad} values are NaN or inf (first at index {first});"
            " drop or repair those items before probing."
        )


def check_targets(
    targets: Tensor | np.ndarray | Sequence[float], n_items: int, num_classes: int | None = None
) -> Targets:
    """Classify and check `targets`: 1-D integers (classes), 2-D 0/1 (multi-label), 1-D floats."""
    if not isinstance(targets, Tensor):
        array = np.asarray(targets)
        if array.dtype.kind not in "biuf":
            first = array.reshape(-1)[0] if array.size else None
            raise ProbeInputError(
                f"targets: values of type {type(first).__name__} ({first!r:.40}); probes take"
                " class ids 0..K-1, 0/1 label rows or floats. Map label strings to ids with"
                " `names, ids = np.unique(labels, return_inverse=True)`."
            )
        targets = torch.as_tensor(array)
    values = targets.cpu()
    if values.shape[0:1] != (n_items,) or values.ndim not in (1, 2):
        raise ProbeInputError(
            f"targets: shape {tuple(values.shape)} for {n_items} items; give [item] class ids or"
            " floats, or an [item, class] 0/1 matrix."
        )
    if values.ndim == 2:
        if not bool(((values == 0) | (values == 1)).all()):
            raise ProbeInputError("targets: a 2-D (multi-label) target must hold only 0 and 1.")
        if num_classes is not None and num_classes != values.shape[1]:
            raise ProbeInputError(
                f"targets: {values.shape[1]} label columns but num_classes={num_classes}."
            )
        return Targets("multilabel", values.float(), int(values.shape[1]))
    if values.is_floating_point():
        if not bool(torch.isfinite(values).all()):
            raise ProbeInputError("targets: regression targets contain NaN or inf.")
        return Targets("regression", values.float(), 1)
    return _class_targets(values.to(torch.int64), num_classes)


def _class_targets(values: Int[Tensor, " item"], num_classes: int | None) -> Targets:
    k = int(values.max()) + 1 if num_classes is None else num_classes
    bad = values[(values < 0) | (values >= k)]
    if bad.numel():
        raise ProbeInputError(
            f"targets: label {int(bad[0])} is outside the class range 0..{k - 1}; give class"
            " ids 0..K-1 (map strings with np.unique(..., return_inverse=True)) or set"
            " num_classes."
        )
    if k < 2:
        raise ProbeInputError(f"targets: {k} class; a classification probe needs at least 2.")
    if num_classes is None and k > SPARSE_CLASSES:
        distinct = int(values.unique().numel())
        if k > 2 * distinct:
            raise ProbeInputError(
                f"targets: the class ids are sparse: {distinct} distinct ids up to {k - 1} would"
                f" make a {k}-class probe ({k - distinct} classes that no item has); map them to"
                " dense ids with `names, ids = np.unique(targets, return_inverse=True)` (class i"
                f" is names[i]), or pass num_classes={k} if those classes are real."
            )
    return Targets("classification", values, k)


def warn_absent_classes(
    targets: Targets,
    codes: Int[Tensor, " item"],
    train_sets: Bool[Tensor, "*set item"] | None = None,
) -> None:
    """Warn (`ClassAbsentFromTrainWarning`) about classes seen in dev/test but never in train
    (or, given explicit training sets, never in one of them)."""
    if targets.kind == "regression":
        return
    present = _class_presence(targets, codes)
    if train_sets is None:
        trained = present[TRAIN][None]
    else:
        sets = train_sets.reshape(-1, train_sets.shape[-1]).float()
        labels = targets.values
        if targets.kind == "classification":
            labels = torch.nn.functional.one_hot(labels, targets.num_classes)
        trained = (sets @ labels.float()) > 0
    where = "train" if train_sets is None else "some of the train masks"
    for split in (1, 2):
        missing = (present[split] & ~trained).any(dim=0).nonzero().flatten().tolist()
        if missing:
            warnings.warn(
                f"targets: classes {missing} occur in {SPLIT_NAMES[split]} but not in {where};"
                " no probe can predict them (they still count in the metrics). Move some of"
                " their items to train or drop them.",
                ClassAbsentFromTrainWarning,
                stacklevel=3,
            )


def _class_presence(targets: Targets, codes: Int[Tensor, " item"]) -> Tensor:
    present = torch.zeros(3, targets.num_classes, dtype=torch.bool)
    for split in range(3):
        rows = targets.values[codes == split]
        if targets.kind == "classification":
            present[split, rows.unique()] = True
        elif rows.numel():
            present[split] = rows.amax(dim=0) > 0
    return present


def resolve_device(device: torch.device | str | None, data: Tensor | None) -> torch.device:
    """`device` if given (refused with `DeviceError` when this machine lacks it); else the data's
    device when it is an accelerator; else CUDA when present; else the CPU. `data` None: data
    on the host (a `FeatureSet`)."""
    if device is not None:
        return checked_device(device)
    if data is not None and data.device.type != "cpu":
        return data.device
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def type_ids(keys: Tensor | np.ndarray | Sequence[object], n_items: int) -> Int[Tensor, " item"]:
    """Integer type ids for control-task keys (surface strings or ids), one key per item."""
    array = keys.cpu().numpy() if isinstance(keys, Tensor) else np.asarray(keys)
    if array.ndim != 1 or array.shape[0] != n_items:
        raise ProbeInputError(
            f"keys: shape {array.shape} for {n_items} items; give one key (the word or span's"
            " surface string) per item."
        )
    _, inverse = np.unique(array, return_inverse=True)
    return torch.as_tensor(inverse.reshape(-1), dtype=torch.int64)


def grid_site_features(
    feats: Float[Tensor, "item site dim"], sites: tuple[int, ...], device: torch.device
) -> Float[Tensor, "item grid_site dim"]:
    """The grid's sites of `feats`, contiguous on `device` (a view when nothing changes)."""
    if sites != tuple(range(feats.shape[1])):
        feats = feats[:, list(sites)]
    return feats.to(device).contiguous()


def check_site_names(names: Sequence[str] | None, n_sites: int, what: str) -> None:
    """Raise `ProbeInputError` unless `names` is None or one name per site of `what`."""
    if names is not None and len(names) != n_sites:
        raise ProbeInputError(
            f"site_names: {len(names)} names for {n_sites} sites; give one name per site of {what}"
        )
