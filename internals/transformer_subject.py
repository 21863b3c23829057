"""`TransformerSubject`: an HF model read through a hook backend, items pooled on its device."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from jaxtyping import Float
from torch import Tensor, nn
from tqdm.auto import tqdm

from internals.align import EncodedText, encode_texts, require_offsets
from internals.backends.base import HookBackend
from internals.batching import Padding, collate, length_buckets
from internals.content_hash import module_digest
from internals.items import CharSpan, SpanItem
from internals.layout import ModelLayout
from internals.pool import PoolHow
from internals.sites import Site
from internals.store import fingerprint
from internals.subject import Subject

DEFAULT_MAX_LENGTH = 512


class TransformerSubject(Subject):
    """Transformer encoder, decoder or encoder-decoder with hooks at any layer."""

    def __init__(
        self,
        model: nn.Module,
        tokenizer: Any,
        layout: ModelLayout,
        backend: HookBackend,
        *,
        name: str,
        init: str,
        fingerprint: str,
        batch_size: int = 64,
        max_batch_tokens: int = 16384,
        padding_side: str | None = None,
    ) -> None:
        require_offsets(tokenizer)
        self.model, self.tokenizer, self.layout, self.backend = model, tokenizer, layout, backend
        self.name, self.init, self.fingerprint = name, init, fingerprint
        self.kind = layout.kind
        self.dim = next(iter(layout.parts.values())).dim
        self.device = next(model.parameters()).device
        self.batch_size, self.max_batch_tokens = batch_size, max_batch_tokens
        self.padding_side: str = padding_side or getattr(tokenizer, "padding_side", None) or "right"
        self.max_length = _max_length(model, tokenizer)

    @property
    def part_layers(self) -> dict[str, int]:
        """Layers per part (`encoder`, `decoder`)."""
        return {part: layout.n_layers for part, layout in self.layout.parts.items()}

    @property
    def streams(self) -> tuple[str, ...]:
        """Streams the chosen backend reads besides `resid_post`."""
        return self.backend.streams

    def content_key(self) -> str:
        """`fingerprint` plus a digest of every weight and buffer as they are now, and the
        tokenizer's size: editing the model object after loading gives a new store key."""
        live = {"weights": module_digest(self.model), "vocab": len(self.tokenizer)}
        return fingerprint({"loaded": self.fingerprint, **live})

    def _padding(self) -> Padding:
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id if self.tokenizer.eos_token_id is not None else 0
        start = None
        if self.kind == "encoder-decoder":
            start = getattr(self.model.config, "decoder_start_token_id", None)
            start = int(start if start is not None else pad)
        return Padding(int(pad), self.padding_side, self.padding_side == "left", start)

    def encode(self, items: Sequence[SpanItem]) -> tuple[list[EncodedText], np.ndarray]:
        """Tokenize each distinct text once and align the distinct spans asked of it.

        Returns the encoded texts and, for every (item, segment) in feature order, the index of
        its pooled row among all encoded segments (items sharing a sentence share its forward).
        """
        jobs: dict[str, tuple[dict[CharSpan, int], list[int], str]] = {}
        wanted: list[tuple[str, CharSpan]] = []
        for index, item in enumerate(items):
            for field, (text, item_spans) in zip(("text", "text_pair"), item.texts()):
                spans, owners, _ = jobs.setdefault(text, ({}, [], field))
                for span in item_spans or ((0, len(text)),):
                    if span not in spans:
                        spans[span] = len(spans)
                        owners.append(index)
                    wanted.append((text, span))
        texts = list(jobs)
        encoded = encode_texts(
            self.tokenizer,
            texts,
            [tuple(jobs[t][0]) for t in texts],
            [jobs[t][1] for t in texts],
            [jobs[t][2] for t in texts],
            max_length=self.max_length,
        )
        first = dict(zip(texts, np.cumsum([0] + [len(jobs[t][0]) for t in texts[:-1]])))
        rows = np.array([first[text] + jobs[text][0][span] for text, span in wanted])
        return encoded, rows

    def compute(
        self, items: Sequence[SpanItem], sites: Sequence[Site], pool: PoolHow, bar: tqdm | None
    ) -> Float[Tensor, "item site dim"]:
        """Encode, batch by length, run the backend, and reassemble rows in item order."""
        encoded, rows = self.encode(items)
        counts = np.array([len(e.segments) for e in encoded])
        first_segment = np.concatenate([[0], np.cumsum(counts)[:-1]])
        pooled_all = torch.empty(int(counts.sum()), len(sites), self.dim)
        padding = self._padding()
        parts = list(self.layout.parts)
        lengths = [len(e.input_ids) for e in encoded]
        done, total = 0, sum(len(item.texts()) for item in items)
        self.model.eval()
        for batch_index in length_buckets(lengths, self.batch_size, self.max_batch_tokens):
            batch = collate([encoded[i] for i in batch_index], padding, parts, self.device)
            pooled = self.backend.pooled(batch, sites, pool)
            target = torch.from_numpy(
                np.concatenate(
                    [np.arange(first_segment[i], first_segment[i] + counts[i]) for i in batch_index]
                )
            )
            rows_now = torch.stack([pooled[site] for site in sites], dim=1)
            pooled_all[target] = rows_now.detach().float().cpu()
            if bar is not None:  # progress in items' texts, spread over the distinct texts
                done_now = min(total, done + round(total * len(batch_index) / len(encoded)))
                bar.update(done_now - done)
                done = done_now
        if bar is not None and done < total:
            bar.update(total - done)
        width = len(rows) // len(items)
        out = pooled_all[torch.from_numpy(rows)]
        return (
            out.view(len(items), width, len(sites), self.dim)
            .transpose(1, 2)
            .reshape(len(items), len(sites), width * self.dim)
        )


def _max_length(model: nn.Module, tokenizer: Any) -> int:
    limits = [getattr(tokenizer, "model_max_length", None)]
    model_config: Any = model.config
    config = model_config.get_text_config() if hasattr(model_config, "get_text_config") else None
    for key in ("max_position_embeddings", "n_positions"):
        limits.append(getattr(config, key, None))
    usable = [int(x) for x in limits if isinstance(x, int) and 0 < x < 1_000_000]
    return min(usable) if usable else DEFAULT_MAX_LENGTH
