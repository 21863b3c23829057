"""Which parameters of a loaded LM were not in its checkpoint (so were freshly initialised).

MiniLM's package ships the encoder only: `load_subject("minilm", head="lm")` builds BERT's MLM
head from scratch. The semantic test reports this instead of passing a random head off as trained.
"""

from __future__ import annotations

from pathlib import Path

from safetensors import safe_open
from torch import nn


def checkpoint_keys(folder: str | Path) -> set[str] | None:
    """Parameter names stored in a folder's safetensors files (None when there are none)."""
    files = sorted(Path(folder).glob("*.safetensors"))
    if not files:
        return None
    keys: set[str] = set()
    for file in files:
        with safe_open(str(file), "pt") as handle:
            keys.update(handle.keys())
    return keys


def untrained_parameters(model: nn.Module, folder: str | Path) -> list[str] | None:
    """Parameters of `model` absent from the checkpoint in `folder` (tied ones count as present).

    None when the folder holds no safetensors file to compare with.
    """
    stored = checkpoint_keys(folder)
    if stored is None:
        return None
    prefix = f"{getattr(model, 'base_model_prefix', '')}."
    missing = []
    for name, _ in model.named_parameters():  # tied parameters are listed once, under one name
        bare = name[len(prefix) :] if name.startswith(prefix) else name
        if name not in stored and bare not in stored:
            missing.append(name)
    return missing
