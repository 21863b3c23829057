"""Where a Hugging Face model keeps its layers, found once and checked against `hidden_states`.

For each part (encoder, decoder) the layout names the block list and, when the part's last
`hidden_states` entry is a final norm's output (GPT-2 `ln_f`, Llama `norm`, T5
`final_layer_norm`), that norm. `discover_layout` finds candidates by structure, then runs one
short forward pass with `output_hidden_states=True` and keeps only a mapping that reproduces every
`hidden_states[k]`; anything else is an error rather than a guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from internals.errors import SiteError
from internals.placement import input_device

PROBE_TEXT = "The quick brown fox jumps over the lazy dog."


@dataclass(frozen=True)
class PartLayout:
    """Module paths of one part: its block list and (optional) final norm."""

    layers: str
    n_layers: int
    final_norm: str | None
    dim: int


@dataclass(frozen=True)
class ModelLayout:
    """Parts of a model in forward order, e.g. {"encoder": ..., "decoder": ...}."""

    kind: str  # "encoder" | "decoder" | "encoder-decoder"
    parts: dict[str, PartLayout]


def config_kind(config: Any, class_name: str = "") -> str:
    """`encoder-decoder`, `decoder` (causal) or `encoder` (bidirectional) from an HF config."""
    if getattr(config, "is_encoder_decoder", False):
        return "encoder-decoder"
    text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
    names = [class_name, *(getattr(config, "architectures", None) or [])]
    if getattr(text_config, "is_decoder", False) or any(
        "CausalLM" in n or "LMHead" in n for n in names
    ):
        return "decoder"
    model_type = getattr(config, "model_type", "")
    causal_types = ("gpt", "llama", "mistral", "qwen", "phi", "gemma", "opt", "bloom", "falcon")
    return "decoder" if model_type.startswith(causal_types) or "neox" in model_type else "encoder"


def model_kind(model: nn.Module) -> str:
    """`config_kind` of a model object."""
    return config_kind(model.config, type(model).__name__)


def _module_lists(root: nn.Module, prefix: str) -> list[tuple[str, nn.ModuleList]]:
    found = []
    for name, module in root.named_modules():
        if isinstance(module, nn.ModuleList) and len(module) > 0:
            path = f"{prefix}.{name}" if prefix and name else (name or prefix)
            found.append((path, module))
    return found


def get_module(model: nn.Module, path: str) -> nn.Module:
    """`model.get_submodule(path)` that accepts the empty path."""
    return model if not path else model.get_submodule(path)


def _part_roots(model: nn.Module, kind: str) -> dict[str, str]:
    if kind != "encoder-decoder":
        return {kind: ""}
    roots: dict[str, str] = {}
    for part in ("encoder", "decoder"):
        target = getattr(model, f"get_{part}")()
        for name, module in model.named_modules():
            if module is target:
                roots[part] = name
                break
    return roots


def _probe_inputs(model: nn.Module, tokenizer: Any, kind: str) -> dict[str, torch.Tensor]:
    device = input_device(model)
    enc = tokenizer([PROBE_TEXT], return_tensors="pt")
    inputs = {"input_ids": enc["input_ids"].to(device)}
    if "attention_mask" in enc:
        inputs["attention_mask"] = enc["attention_mask"].to(device)
    if kind == "encoder-decoder":
        inputs["decoder_input_ids"] = decoder_inputs(model, inputs["input_ids"])
    return inputs


def decoder_inputs(model: nn.Module, input_ids: torch.Tensor) -> torch.Tensor:
    """Teacher forcing: the decoder reads `[decoder_start] + input_ids` (one position later)."""
    start = getattr(model.config, "decoder_start_token_id", None)
    if start is None:
        start = getattr(model.config, "pad_token_id", 0) or 0
    first = torch.full_like(input_ids[:, :1], int(start))
    return torch.cat([first, input_ids], dim=1)


def _first_output(value: Any) -> Any:
    return value[0] if isinstance(value, tuple | list) else value


def discover_layout(model: nn.Module, tokenizer: Any) -> ModelLayout:
    """Find and verify the block lists and final norms of an HF model (one short forward)."""
    kind = model_kind(model)
    roots = _part_roots(model, kind)
    inputs = _probe_inputs(model, tokenizer, kind)
    captured: dict[str, Any] = {}
    handles = []

    def keep(name: str, want_input: bool = False):
        def hook(module: nn.Module, args: tuple, kwargs: dict, output: Any) -> None:
            if want_input:
                captured[name] = args[0] if args else kwargs.get("hidden_states")
            else:
                captured.setdefault(name, _first_output(output))

        return hook

    candidates: dict[str, list[str]] = {}
    norms: dict[str, list[str]] = {}
    for part, root in roots.items():
        lists = _module_lists(get_module(model, root), root)
        candidates[part] = [path for path, _ in lists]
        for path, modules in lists:
            handles.append(
                modules[0].register_forward_hook(keep(f"{path}#in", True), with_kwargs=True)
            )
            handles.append(modules[-1].register_forward_hook(keep(f"{path}#out"), with_kwargs=True))
        norms[part] = []
        for name, module in get_module(model, root).named_modules():
            full = f"{root}.{name}" if root and name else (name or root)
            if "norm" in type(module).__name__.lower() and not any(
                full.startswith(f"{p}.") for p in candidates[part]
            ):
                norms[part].append(full)
                handles.append(module.register_forward_hook(keep(full), with_kwargs=True))
    try:
        with torch.no_grad():
            output = model(**inputs, output_hidden_states=True, return_dict=True)
    finally:
        for handle in handles:
            handle.remove()
    hidden = {
        "encoder-decoder": {
            "encoder": output.get("encoder_hidden_states"),
            "decoder": output.get("decoder_hidden_states"),
        },
    }.get(kind, {kind: output.get("hidden_states")})
    parts: dict[str, PartLayout] = {}
    for part, states in hidden.items():
        parts[part] = _match_part(model, part, states, candidates[part], norms[part], captured)
    return ModelLayout(kind, parts)


def _same(a: Any, b: Any) -> bool:
    """Equal tensors, wherever each lives (a dispatched model's layers sit on several devices)."""
    return (
        isinstance(a, torch.Tensor)
        and a.shape == b.shape
        and torch.allclose(a.float(), b.to(a.device).float(), atol=1e-5)
    )


def _match_part(
    model: nn.Module,
    part: str,
    states: Any,
    candidates: list[str],
    norms: list[str],
    captured: dict[str, Any],
) -> PartLayout:
    if states is None:
        raise SiteError(
            f"{type(model).__name__} returned no hidden states for its {part}; lingprobe reads"
            " models that support output_hidden_states=True"
        )
    n = len(states) - 1
    for path in candidates:
        modules = get_module(model, path)
        assert isinstance(modules, nn.ModuleList)
        if len(modules) != n or not _same(captured.get(f"{path}#in"), states[0]):
            continue
        last = states[n]
        dim = int(last.shape[-1])
        if _same(captured.get(f"{path}#out"), last):
            return PartLayout(path, n, None, dim)
        for norm in norms:
            if _same(captured.get(norm), last):
                return PartLayout(path, n, norm, dim)
    raise SiteError(
        f"could not map the {part} of {type(model).__name__} to its hidden_states (looked at"
        f" {candidates}); this architecture needs backend='lens' or a report to lingprobe"
    )
