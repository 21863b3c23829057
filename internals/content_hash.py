"""Content identities of what feeds the activation store: checkpoints, live weights, tokenizers.

A store key must change whenever the features could: a checkpoint folder overwritten in place, a
parameter edited in a model object, a different tokenizer. Files are hashed once and the digest
is remembered by (path, size, mtime, ctime, inode), in memory and under
`<cache>/file-digests/`, so a large checkpoint is read again only after it changed. Weights are
hashed from the tensors themselves (every parameter and buffer, all values) each time a key is
needed, because a model object can be edited between two calls.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from torch import nn

from internals.cache_dir import cache_root
from internals.placement import named_tensors
from lingprobe.atomic import atomic_write_bytes
from lingprobe.digest import bytes_digest, combined_digest, file_digest
from lingprobe.shards import tensor_bytes

log = logging.getLogger(__name__)
# Files of a Hugging Face Trainer checkpoint that do not change the model's outputs.
TRAINER_STATE = ("optimizer.", "scheduler.", "rng_state", "training_args.", "trainer_state.")
_MEMORY: dict[str, tuple[tuple[int, ...], str]] = {}


def _stat_key(path: Path) -> tuple[int, ...]:
    s = path.stat()
    return (s.st_size, s.st_mtime_ns, s.st_ctime_ns, s.st_ino, s.st_dev)


def cached_file_digest(path: str | os.PathLike[str]) -> str:
    """Digest of a file's bytes, recomputed only when its size, times or inode changed."""
    source = Path(path).resolve()
    name = str(source)
    before = _stat_key(source)
    remembered = _MEMORY.get(name)
    if remembered is not None and remembered[0] == before:
        return remembered[1]
    record = _disk_record(name)
    if record is not None and tuple(record.get("stat", ())) == before:
        _MEMORY[name] = (before, str(record["digest"]))
        return str(record["digest"])
    digest = file_digest(source)
    if _stat_key(source) != before:  # written to while we read it: hash again, remember nothing
        log.warning("%s changed while it was hashed; hashing it again", source)
        return file_digest(source)
    _MEMORY[name] = (before, digest)
    _save_record(name, {"path": name, "stat": list(before), "digest": digest})
    return digest


def _record_path(name: str) -> Path:
    return cache_root() / "file-digests" / f"{bytes_digest(name.encode())}.json"


def _disk_record(name: str) -> dict[str, Any] | None:
    try:
        record = json.loads(_record_path(name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(record, dict) and record.get("path") == name and "digest" in record
    return record if ok else None


def _save_record(name: str, record: dict[str, Any]) -> None:
    try:
        atomic_write_bytes(_record_path(name), json.dumps(record).encode())
    except OSError as error:  # a read-only cache only costs a re-hash next time
        log.debug("cannot remember the digest of %s: %s", name, error)


def folder_digest(folder: str | os.PathLike[str]) -> str:
    """Digest of a model folder: every top-level file (weights, config, tokenizer) by content.

    A Trainer checkpoint's optimizer, scheduler and RNG state are left out: they do not change
    what the model computes.
    """
    root = Path(folder)
    files = sorted(
        p for p in root.iterdir() if p.is_file() and not p.name.startswith(TRAINER_STATE)
    )
    return combined_digest((p.name, cached_file_digest(p)) for p in files)


def module_digest(module: nn.Module) -> str:
    """Digest of every parameter and buffer of `module`: names, dtypes, shapes and all values
    (offloaded ones read from their offload store)."""
    parts = []
    # offloaded weights are read from their store; quantised ones as their stored parts
    for name, tensor in named_tensors(module):
        parts.append(
            (f"{name}|{tensor.dtype}|{tuple(tensor.shape)}", bytes_digest(tensor_bytes(tensor)))
        )
    return combined_digest(parts)


def tokenizer_digest(tokenizer: Any) -> str:
    """Digest of a tokenizer: its full serialised form (fast tokenizers) or vocabulary, and the
    settings that change encodings."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        body = backend.to_str()
    else:
        vocab = tokenizer.get_vocab() if hasattr(tokenizer, "get_vocab") else {}
        body = json.dumps(sorted(vocab.items()), ensure_ascii=False)
    settings = {
        "class": type(tokenizer).__name__,
        "size": len(tokenizer) if hasattr(tokenizer, "__len__") else None,
        "special": getattr(tokenizer, "special_tokens_map", None),
        "padding_side": getattr(tokenizer, "padding_side", None),
        "max_length": getattr(tokenizer, "model_max_length", None),
    }
    return bytes_digest(body.encode(), json.dumps(settings, sort_keys=True, default=str).encode())


def config_digest(config: Any) -> str:
    """Digest of a model config's settings (`to_dict()`), or '' when there is none."""
    if config is None or not hasattr(config, "to_dict"):
        return ""
    return bytes_digest(json.dumps(config.to_dict(), sort_keys=True, default=str).encode())
