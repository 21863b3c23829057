"""`load_subject`: one call from a name, folder, model object or vectors file to a `Subject`."""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from internals.backends.lens import LensBackend, boot_bridge
from internals.backends.sight import SightBackend
from internals.backends.static import StaticSubject
from internals.errors import ModelNotFoundError, UnsupportedModelError
from internals.layout import config_kind, discover_layout
from internals.packaged import canonical_name, packaged_path
from internals.placement import (
    DeviceMap,
    as_dtype,
    is_dispatched,
    named_tensors,
    place,
    refuse_dispatched_twin,
)
from internals.quantized import quantization_of, refuse_random_twin
from internals.random_init import RANDOM_SCHEMES, reinitialize
from internals.store import fingerprint
from internals.subject import Subject
from internals.transformer_subject import TransformerSubject
from internals.vectors import VectorTable, load_vectors

log = logging.getLogger(__name__)
BACKENDS = ("auto", "nnsight", "lens")
HEADS = {
    None: "AutoModel",
    "lm": None,  # chosen by kind below
    "sequence-classification": "AutoModelForSequenceClassification",
}
LM_CLASSES = {
    "encoder": "AutoModelForMaskedLM",
    "decoder": "AutoModelForCausalLM",
    "encoder-decoder": "AutoModelForSeq2SeqLM",
}


def load_subject(
    spec: str | nn.Module,
    *,
    backend: str = "auto",
    init: str = "pretrained",
    seed: int = 0,
    device: str | torch.device | None = None,
    dtype: torch.dtype | str | None = None,
    device_map: DeviceMap | None = None,
    max_memory: dict[Any, Any] | None = None,
    offload_folder: str | Path | None = None,
    quantization_config: Any = None,
    tokenizer: Any = None,
    head: str | None = None,
    random_scheme: str = "xavier_uniform",
    oov: str = "zero",
    trust_remote_code: bool = False,
    revision: str | None = None,
    padding_side: str | None = None,
    batch_size: int | None = None,
    batch_tokens: int | None = None,
) -> Subject:
    """Load a subject whose activations `features` reads.

    spec: a hub id, a local folder, an HF model object (pass its `tokenizer`), `glove:<path>` /
    `word2vec:<path>` for text vector files, or a packaged offline model
    (`sentence-transformers/all-MiniLM-L6-v2`, `HuggingFaceTB/SmolLM2-135M-Instruct`,
    `glove:6B.50d`). init: "pretrained" or "random" (same architecture and tokenizer, weights
    re-drawn from `seed` with `random_scheme`). backend: "auto" (nnsight, measured fastest),
    "nnsight" or "lens" (transformer-lens TransformerBridge). head: None (backbone), "lm"
    (masked/causal/seq2seq LM head) or "sequence-classification".
    """
    if init not in ("pretrained", "random"):
        raise ValueError(f"init={init!r}; choose 'pretrained' or 'random'")
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}; choose one of {', '.join(BACKENDS)}")
    if random_scheme not in RANDOM_SCHEMES:
        raise ValueError(f"random_scheme={random_scheme!r}; choose {', '.join(RANDOM_SCHEMES)}")
    dtype = as_dtype(dtype)
    if isinstance(spec, str) and spec.split(":", 1)[0] in ("glove", "word2vec"):
        kind, location = spec.split(":", 1)
        table = load_vectors(kind, location)
        if init == "random":
            table = _random_table(table, seed)
        return StaticSubject(table, oov=oov, init=init)
    target = torch.device(device) if device is not None else _default_device()
    if isinstance(spec, nn.Module):
        if tokenizer is None:
            raise ValueError(
                "a model object needs its tokenizer: load_subject(model, tokenizer=tok)"
            )
        model = spec
        if init == "random":
            refuse_random_twin(model)
            refuse_dispatched_twin(model)
            model = reinitialize(copy.deepcopy(model), random_scheme, seed)
        name = getattr(model.config, "_name_or_path", "") or type(model).__name__
        identity: dict[str, Any] = {"object": _content_hash(model)}
        source = None
    else:
        name = canonical_name(spec)
        source = packaged_path(spec) or spec
        tokenizer = tokenizer or _tokenizer(source, name, trust_remote_code, revision)
        if init == "random" and quantization_config is not None:
            raise UnsupportedModelError(
                "init='random' with quantization_config: a quantised model has no random twin;"
                " load the random twin unquantised"
            )
        placement: dict[str, Any] = {
            "device_map": device_map,
            "max_memory": max_memory,
            "offload_folder": offload_folder,
            "quantization_config": quantization_config,
        }
        model = _model(
            source,
            name,
            head,
            init,
            seed,
            random_scheme,
            dtype,
            trust_remote_code,
            revision,
            {key: value for key, value in placement.items() if value is not None},
        )
        identity = {"source": name, "revision": revision}
        if quantization_of(model) is not None:
            identity["quantization"] = _describe(model)
    model = place(
        model,
        device=None if device is None else target,
        default_device=target,
        dtype=dtype,
        device_map=device_map,
        max_memory=max_memory,
        offload_folder=offload_folder,
        given_object=isinstance(spec, nn.Module),
    )
    model.eval()
    layout = discover_layout(model, tokenizer)
    hook_backend = _backend(backend, model, tokenizer, layout, name, source, head)
    key = fingerprint(
        {
            **identity,
            "init": init,
            "seed": seed,
            "scheme": random_scheme,
            "dtype": str(next(model.parameters()).dtype),
        }
    )
    return TransformerSubject(
        model,
        tokenizer,
        layout,
        hook_backend,
        name=name,
        init=init,
        fingerprint=key,
        batch_size=batch_size,
        batch_tokens=batch_tokens,
        padding_side=padding_side,
    )


def _default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _describe(model: nn.Module) -> Any:
    """The quantisation settings of a loaded model, for its fingerprint (None when plain)."""
    config: Any = getattr(model.config, "quantization_config", None)
    if config is None:
        return quantization_of(model)
    return config.to_dict() if hasattr(config, "to_dict") else config


def _not_found(name: str, error: Exception) -> ModelNotFoundError:
    return ModelNotFoundError(
        f"cannot load {name!r}: it is not a local folder, not a packaged offline model, and the"
        f" hub could not provide it ({type(error).__name__}: {str(error).splitlines()[0][:200]})."
        " Check the name, pass a local folder, or unset HF_HUB_OFFLINE to download it"
    )


def _tokenizer(source: str | Path, name: str, trust: bool, revision: str | None) -> Any:
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(
            source, use_fast=True, trust_remote_code=trust, revision=revision
        )
    except (OSError, ValueError) as error:
        raise _not_found(name, error) from error


def _model(
    source: str | Path,
    name: str,
    head: str | None,
    init: str,
    seed: int,
    scheme: str,
    dtype: torch.dtype | None,
    trust: bool,
    revision: str | None,
    placement: dict[str, Any],
) -> nn.Module:
    import transformers

    try:
        config = transformers.AutoConfig.from_pretrained(
            source, trust_remote_code=trust, revision=revision
        )
    except (OSError, ValueError) as error:
        raise _not_found(name, error) from error
    if head not in HEADS:
        raise ValueError(f"head={head!r}; choose None, 'lm' or 'sequence-classification'")
    class_name = HEADS[head] or LM_CLASSES[config_kind(config)]
    auto = getattr(transformers, class_name)
    if init == "random":
        torch.manual_seed(seed)
        model = auto.from_config(config, trust_remote_code=trust)
        return model if scheme == "model" else reinitialize(model, scheme, seed)
    return auto.from_pretrained(
        source,
        dtype=dtype or torch.float32,
        trust_remote_code=trust,
        revision=revision,
        **placement,
    )


def _backend(
    choice: str,
    model: nn.Module,
    tokenizer: Any,
    layout: Any,
    name: str,
    source: str | Path | None,
    head: str | None,
) -> Any:
    if choice in ("auto", "nnsight"):
        # Measured (benchmarks/bench_extract.py): nnsight on the model's own attention kernel is
        # faster than the bridge, which forces eager attention; so "auto" means nnsight.
        return SightBackend(model, layout)
    if is_dispatched(model) or quantization_of(model) is not None:
        raise UnsupportedModelError(
            "backend='lens' copies the model into a transformer-lens bridge, which a dispatched"
            " or quantised model does not survive; use backend='nnsight' (the default)"
        )
    import transformers

    lens_class = getattr(transformers, LM_CLASSES[layout.kind])
    if type(model).__name__.endswith(("ForMaskedLM", "ForCausalLM")):
        twin = copy.deepcopy(model)  # the bridge mutates the model it wraps
    else:
        twin = lens_class.from_config(model.config)
        twin.base_model.load_state_dict(model.state_dict(), strict=False)  # heads stay fresh
        twin = twin.to(next(model.parameters()).device, next(model.parameters()).dtype)
    return LensBackend(boot_bridge(str(source or name), twin, tokenizer), layout)


def _random_table(table: VectorTable, seed: int) -> VectorTable:
    """Same words, Gaussian vectors with the table's per-dimension mean and spread."""
    sample = np.asarray(table.matrix[: min(len(table.matrix), 50_000)], dtype=np.float32)
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal(table.matrix.shape, dtype=np.float32)
    matrix = matrix * sample.std(0) + sample.mean(0)
    return VectorTable(f"{table.source}#random{seed}", table.rows, matrix)


def _content_hash(model: nn.Module) -> str:
    """Cheap identity of a model object: config plus a sample of every parameter."""
    config: Any = model.config
    digest = hashlib.sha256(json.dumps(config.to_dict(), sort_keys=True, default=str).encode())
    for name, param in named_tensors(model):  # offloaded weights read from their store
        digest.update(name.encode())
        digest.update(param.detach().flatten()[:4096].float().cpu().numpy().tobytes())
    return digest.hexdigest()[:16]
