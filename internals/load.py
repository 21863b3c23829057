"""`load_subject`: one call from a name, folder, model object or vectors file to a `Subject`."""

from __future__ import annotations

import copy
import difflib
import json
import logging
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np
import torch
from torch import nn

from internals.backends.lens import LensBackend, boot_bridge
from internals.backends.sight import SightBackend
from internals.backends.static import StaticSubject
from internals.content_hash import config_digest, folder_digest, tokenizer_digest
from internals.errors import ModelNotFoundError, OptionError, UnsupportedModelError
from internals.heads import find_heads
from internals.layout import config_kind, discover_layout
from internals.packaged import ALIASES, canonical_name, packaged_path
from internals.placement import (
    DeviceMap,
    as_dtype,
    is_dispatched,
    place,
    refuse_dispatched_twin,
)
from internals.quantized import quantization_of, refuse_random_twin
from internals.random_init import RANDOM_SCHEMES, reinitialize, seeded_global_rng
from internals.store import fingerprint
from internals.subject import Subject
from internals.transformer_subject import TransformerSubject
from internals.vectors import VectorTable, load_vectors
from lingprobe.devices import checked_device

log = logging.getLogger(__name__)
Backend = Literal["auto", "nnsight", "lens"]
Init = Literal["pretrained", "random"]
Head = Literal["lm", "sequence-classification"]
RandomScheme = Literal["xavier_uniform", "model"]
Oov = Literal["zero", "skip", "error"]
PaddingSide = Literal["left", "right"]
BACKENDS: tuple[str, ...] = get_args(Backend)
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
    spec: str | Path | nn.Module,
    *,
    backend: Backend = "auto",
    init: Init = "pretrained",
    seed: int = 0,
    device: str | torch.device | None = None,
    dtype: torch.dtype | str | None = None,
    device_map: DeviceMap | None = None,
    max_memory: dict[Any, Any] | None = None,
    offload_folder: str | Path | None = None,
    quantization_config: Any = None,
    tokenizer: Any = None,
    head: Head | None = None,
    random_scheme: RandomScheme = "xavier_uniform",
    oov: Oov = "zero",
    trust_remote_code: bool = False,
    revision: str | None = None,
    padding_side: PaddingSide | None = None,
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

    Examples:
        >>> from internals import load_subject, sites
        >>> glove = load_subject("glove:6B.50d")  # packaged: no download
        >>> [site.name for site in sites.every_layer(glove)]
        ['static.0']
    """
    if init not in ("pretrained", "random"):
        raise OptionError(f"init={init!r}; choose 'pretrained' or 'random'")
    if backend not in BACKENDS:
        raise OptionError(f"backend={backend!r}; choose one of {', '.join(BACKENDS)}")
    if random_scheme not in RANDOM_SCHEMES:
        raise OptionError(f"random_scheme={random_scheme!r}; choose {', '.join(RANDOM_SCHEMES)}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise OptionError(f"seed={seed!r}: give an integer seed for the random twin's weights")
    dtype = as_dtype(dtype)
    if isinstance(spec, str) and spec.split(":", 1)[0] in ("glove", "word2vec"):
        kind, location = spec.split(":", 1)
        table = load_vectors(kind, location)
        if init == "random":
            table = _random_table(table, seed)
        return StaticSubject(table, oov=oov, init=init)
    target = checked_device(device) if device is not None else _default_device()
    if isinstance(spec, nn.Module):
        if tokenizer is None:
            raise OptionError(
                "a model object needs its tokenizer: load_subject(model, tokenizer=tok)"
            )
        model = spec
        if init == "random":
            refuse_random_twin(model)
            refuse_dispatched_twin(model)
            model = reinitialize(copy.deepcopy(model), random_scheme, seed)
        name = getattr(model.config, "_name_or_path", "") or type(model).__name__
        identity: dict[str, Any] = {"object": type(model).__name__}
        source = None
    elif isinstance(spec, str | Path):
        name = canonical_name(str(spec))
        source = packaged_path(str(spec)) or spec
        _refuse_remote_code(source, name, trust_remote_code)
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
        identity = _source_identity(source, name, revision, model)
        if quantization_of(model) is not None:
            identity["quantization"] = _describe(model)
    else:
        raise OptionError(
            f"spec is a {type(spec).__name__}; give a hub id or folder (str), a model object"
            " (torch.nn.Module, with tokenizer=), or 'glove:<path>' / 'word2vec:<path>'"
        )
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
    hook_backend = _backend(backend, model, tokenizer, layout, name, source, head, seed)
    key = fingerprint(
        {
            **identity,
            "config": config_digest(getattr(model, "config", None)),
            "tokenizer": tokenizer_digest(tokenizer),
            "head": head,
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


def _source_identity(
    source: str | Path, name: str, revision: str | None, model: nn.Module
) -> dict[str, Any]:
    """What a loaded checkpoint is: a folder by the content of its files (so overwriting it in
    place gives a new key), a hub model by name, revision and the commit it resolved to."""
    if Path(source).is_dir():
        return {"folder": folder_digest(source)}
    commit = getattr(getattr(model, "config", None), "_commit_hash", None)
    return {"source": name, "revision": revision, "commit": commit}


def _describe(model: nn.Module) -> Any:
    """The quantisation settings of a loaded model, for its fingerprint (None when plain)."""
    config: Any = getattr(model.config, "quantization_config", None)
    if config is None:
        return quantization_of(model)
    return config.to_dict() if hasattr(config, "to_dict") else config


def _remote_code(name: str) -> ModelNotFoundError:
    return ModelNotFoundError(
        f"cannot load {name!r} without trust_remote_code=True: its config names model classes"
        " that are not part of transformers (custom code shipped with the model), and"
        " transformers runs such code only when asked. trust_remote_code=True executes Python"
        " files from the model's folder or hub repository on this machine, with your"
        " permissions: pass load_subject(..., trust_remote_code=True) only if you trust its"
        " source (and pin revision= to the commit you reviewed)"
    )


def _refuse_remote_code(source: str | Path, name: str, trust: bool) -> None:
    """A local folder whose config maps to custom classes (`auto_map`) needs trust_remote_code."""
    config = Path(source) / "config.json"
    if trust or not config.is_file():
        return
    try:
        settings = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # transformers reports a broken config itself
    if isinstance(settings, dict) and settings.get("auto_map"):
        raise _remote_code(name)


def _not_found(name: str, error: Exception, source: str | Path) -> ModelNotFoundError:
    if "trust_remote_code" in str(error):
        return _remote_code(name)
    reason = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}" if str(error) else ""
    if Path(source).is_dir():
        return ModelNotFoundError(
            f"cannot load {name!r}: the folder has no usable config or tokenizer ({reason});"
            " it needs what save_pretrained writes (config.json, weights, tokenizer files)"
        )
    short = [*ALIASES, "glove:6B.50d"]
    close = difflib.get_close_matches(name, short, n=2, cutoff=0.6)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    return ModelNotFoundError(
        f"cannot load {name!r}: {hint}it is not a local folder, not a packaged offline model"
        f" ({', '.join(short)}), and the hub could not provide it"
        f" ({reason or type(error).__name__}). Check the name, pass a local folder, or unset"
        " HF_HUB_OFFLINE to download it"
    )


def _tokenizer(source: str | Path, name: str, trust: bool, revision: str | None) -> Any:
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(
            source, use_fast=True, trust_remote_code=trust, revision=revision
        )
    except (OSError, ValueError) as error:
        raise _not_found(name, error, source) from error


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
        raise _not_found(name, error, source) from error
    if head not in HEADS:
        raise OptionError(f"head={head!r}; choose None, 'lm' or 'sequence-classification'")
    class_name = HEADS[head] or LM_CLASSES[config_kind(config)]
    auto = getattr(transformers, class_name)
    if init == "random":
        with seeded_global_rng(seed):  # the model's own init draws from the global RNG
            model = auto.from_config(config, trust_remote_code=trust)
        return model if scheme == "model" else reinitialize(model, scheme, seed)
    with seeded_global_rng(seed):  # weights the checkpoint lacks (a head) are drawn fresh
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
    seed: int,
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
    with seeded_global_rng(seed, model):  # a fresh head and the bridge draw from the global RNG
        if type(model).__name__.endswith(("ForMaskedLM", "ForCausalLM")):
            twin = copy.deepcopy(model)  # the bridge mutates the model it wraps
        else:
            twin = lens_class.from_config(model.config)
            twin.base_model.load_state_dict(model.state_dict(), strict=False)  # heads stay fresh
            twin = twin.to(next(model.parameters()).device, next(model.parameters()).dtype)
        bridge = boot_bridge(str(source or name), twin, tokenizer)
    return LensBackend(bridge, layout, find_heads(model, layout))


def _random_table(table: VectorTable, seed: int) -> VectorTable:
    """Same words, Gaussian vectors with the table's per-dimension mean and spread."""
    sample = np.asarray(table.matrix[: min(len(table.matrix), 50_000)], dtype=np.float32)
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal(table.matrix.shape, dtype=np.float32)
    matrix = matrix * sample.std(0) + sample.mean(0)
    return VectorTable(f"{table.source}#random{seed}", table.rows, matrix, table.digest)
