"""Where a model's attention heads are read: each block's attention output projection.

A head's output (the attention-weighted values of that head, before the output projection
mixes the heads) is a slice of the projection's input: `[batch, token, heads x head_dim]`, head
h in columns `h * head_dim .. (h + 1) * head_dim`. The projection is found by its name in the
block, among those the Hugging Face architectures use; its input width divided by the config's
head count is the head width. Whatever is not found is reported as "no heads" for that part, and
a head site there is refused with the fix (`internals.sites.check`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jaxtyping import Float
from torch import Tensor, nn

from internals.layout import ModelLayout, get_module

# The attention output projection inside one block, per architecture family.
OUTPUT_PROJECTIONS = (
    "self_attn.o_proj",  # Llama, Mistral, Qwen, Gemma, Phi-3
    "attention.output.dense",  # BERT, RoBERTa, MiniLM, ELECTRA
    "attn.c_proj",  # GPT-2
    "attn.attention.out_proj",  # GPT-Neo
    "attn.out_proj",  # GPT-J
    "self_attn.out_proj",  # BART, OPT, Marian
    "self_attn.dense",  # Phi
    "attention.dense",  # GPT-NeoX, Pythia
    "self_attention.dense",  # BLOOM, Falcon
    "layer.0.SelfAttention.o",  # T5
)
HEAD_COUNT_KEYS = ("num_attention_heads", "n_head", "num_heads", "n_heads")


@dataclass(frozen=True)
class PartHeads:
    """One part's heads: the projection's path inside a block, the count and the width."""

    projection: str
    n_heads: int
    head_dim: int


def find_heads(model: nn.Module, layout: ModelLayout) -> dict[str, PartHeads]:
    """The heads of every part whose blocks all have a known output projection."""
    config: Any = model.config
    text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
    found: dict[str, PartHeads] = {}
    for part, part_layout in layout.parts.items():
        n_heads = _head_count(text_config, part)
        blocks: Any = get_module(model, part_layout.layers)
        for path in OUTPUT_PROJECTIONS:
            widths = {_input_width(block, path) for block in blocks}
            if len(widths) == 1 and (width := widths.pop()) and n_heads and width % n_heads == 0:
                found[part] = PartHeads(path, n_heads, width // n_heads)
                break
    return found


def head_columns(pooled: Float[Tensor, "segment dim"], head: int, head_dim: int) -> Tensor:
    """Head `head`'s columns of pooled output-projection inputs: `[segment, head_dim]`."""
    return pooled[:, head * head_dim : (head + 1) * head_dim]


def _head_count(config: Any, part: str) -> int:
    keys = (f"{part}_attention_heads", *HEAD_COUNT_KEYS)  # BART: encoder_attention_heads
    for key in keys:
        value = getattr(config, key, None)
        if isinstance(value, int) and value > 0:
            return value
    return 0


def _input_width(block: nn.Module, path: str) -> int | None:
    try:
        module = block.get_submodule(path)
    except AttributeError:
        return None
    if isinstance(module, nn.Linear):
        return module.in_features
    weight = getattr(module, "weight", None)  # GPT-2's Conv1D keeps its weight as [in, out]
    if type(module).__name__ == "Conv1D" and weight is not None:
        return int(weight.shape[0])
    return None
