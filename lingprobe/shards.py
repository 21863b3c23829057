"""The shard file: one `[item, dim]` block of features in safetensors, with its key and checksum.

A shard holds one tensor under the name `features`; its safetensors metadata records the format,
the key it belongs to (which store or feature set, which site, which shard) and an XXH3-128
checksum of the tensor's dtype, shape and data bytes. Reading checks all of them, so a flipped
bit, a truncated file, or a shard copied in from another site, subject or feature set is found
before its numbers are used. The activation store (`internals.store`) and `FeatureSet`
(`lingprobe.feature_set`) read and write this one format. No pickle anywhere.
"""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save as safetensors_bytes
from torch import Tensor

from lingprobe.atomic import atomic_write_bytes
from lingprobe.digest import bytes_digest

KEY = "features"
FORMAT = "lingprobe-shard/1"

__all__ = ["FORMAT", "KEY", "ShardDamage", "read_shard", "shard_checksum", "write_shard"]


class ShardDamage(Exception):
    """A shard file that fails verification; the message says what is wrong with it.

    Not a `LingprobeError`: each reader decides what a damaged shard means (the store
    recomputes it, a feature set refuses it naming the fix).
    """


def tensor_bytes(tensor: Tensor) -> memoryview:
    """The raw bytes of a tensor (copied to the CPU first when it lives elsewhere)."""
    flat = tensor.detach().reshape(-1)
    if flat.device.type != "cpu":
        flat = flat.cpu()
    return memoryview(flat.contiguous().view(torch.uint8).numpy())  # type: ignore[arg-type]


def shard_checksum(tensor: Tensor) -> str:
    """XXH3-128 of a shard's dtype, shape and data bytes."""
    header = f"{tensor.dtype}|{tuple(tensor.shape)}|".encode()
    return bytes_digest(header, tensor_bytes(tensor))


def write_shard(path: Path, tensor: Tensor, key: str) -> str:
    """Write `tensor` to `path` atomically with `key` and its checksum; return the checksum."""
    data = tensor.detach().cpu().contiguous()
    checksum = shard_checksum(data)
    meta = {"format": FORMAT, "key": key, "checksum": checksum}
    atomic_write_bytes(path, safetensors_bytes({KEY: data}, metadata=meta))
    return checksum


def read_shard(
    path: Path,
    key: str,
    shape: tuple[int, ...],
    dtype: torch.dtype,
    checksum: str | None = None,
) -> Tensor:
    """The verified tensor of the shard at `path`; `ShardDamage` saying why when it fails.

    Verified: readable, the expected format, `key`, dtype and shape, and data bytes matching
    the checksum it records (and `checksum`, when the caller knows which one it expects).
    """
    try:
        with safe_open(str(path), framework="pt") as handle:
            meta = handle.metadata() or {}
            tensor = handle.get_tensor(KEY)
    except FileNotFoundError:
        raise ShardDamage("missing") from None
    except Exception as error:  # any unreadable file is damage, whatever the parser raised
        raise ShardDamage(f"unreadable: {type(error).__name__}: {str(error)[:200]}") from None
    problem = _problem(meta, tensor, key, shape, dtype)
    if problem is None and checksum is not None and meta.get("checksum") != checksum:
        problem = "checksum differs from the index: another version of this shard"
    if problem is not None:
        raise ShardDamage(problem)
    return tensor


def _problem(
    meta: dict[str, str], tensor: Tensor, key: str, shape: tuple[int, ...], dtype: torch.dtype
) -> str | None:
    if meta.get("format") != FORMAT:
        return f"format {meta.get('format')!r}, expected {FORMAT!r} (no checksum)"
    if meta.get("key") != key:
        return f"it belongs to {meta.get('key')!r}, not {key!r}"
    if tensor.dtype != dtype or tuple(tensor.shape) != shape:
        return f"{tensor.dtype} {tuple(tensor.shape)}, expected {dtype} {shape}"
    if meta.get("checksum") != shard_checksum(tensor):
        return "checksum mismatch: its bytes changed after it was written"
    return None
