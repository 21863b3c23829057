"""`TransformerSubject`: an HF model read through a hook backend, items pooled on its device."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxtyping import Float
from torch import Tensor, nn

from internals.align import EncodedText, encode_texts, require_offsets
from internals.backends.base import HookBackend
from internals.batch_runner import run_batches
from internals.batching import (
    Padding,
    budget_batches,
    collate,
    default_batch_tokens,
    length_buckets,
    padded_tokens,
)
from internals.content_hash import module_digest
from internals.errors import TruncationWarning
from internals.item_rows import ItemRows
from internals.items import CharSpan, SpanItem
from internals.layout import ModelLayout
from internals.placement import input_device
from internals.pooled_copies import PooledCopies
from internals.progress import ItemCounter, ProgressCallback, ProgressStep
from internals.reading import Reading
from internals.sites import Site, shared_dim
from internals.store import fingerprint
from internals.subject import Subject
from internals.text_rows import RowPlan, plan_rows

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
        batch_size: int | None = None,
        batch_tokens: int | None = None,
        padding_side: str | None = None,
    ) -> None:
        require_offsets(tokenizer)
        for label, value in (("batch_size", batch_size), ("batch_tokens", batch_tokens)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ValueError(f"{label}={value!r}; give a positive integer (or None: default)")
        self.model, self.tokenizer, self.layout, self.backend = model, tokenizer, layout, backend
        self.name, self.init, self.fingerprint = name, init, fingerprint
        self.kind = layout.kind
        self.dim = next(iter(layout.parts.values())).dim
        self.device = input_device(model)
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens or default_batch_tokens(self.device)
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

    @property
    def part_heads(self) -> dict[str, int]:
        """Attention heads per layer, per part whose heads the backend reads."""
        return {part: heads.n_heads for part, heads in self.backend.heads.items()}

    def site_dim(self, site: Site) -> int:
        """`dim`, or the head width (`head_dim`) at a head site."""
        return self.dim if site.head is None else self.backend.heads[site.part].head_dim

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

    def encode(
        self, items: Sequence[SpanItem]
    ) -> tuple[list[EncodedText], np.ndarray, list[list[int]], list[str]]:
        """Tokenize each distinct text once (whole) and align the distinct spans asked of it.

        Returns the encoded texts; for every (item, segment) in feature order, the index of its
        pooled row among all encoded segments (items sharing a sentence share its forward); and
        per text the item owning each segment, and the field ("text"/"text_pair") it came from.
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
            max_length=None,
        )
        first = dict(zip(texts, np.cumsum([0] + [len(jobs[t][0]) for t in texts[:-1]])))
        rows = np.array([first[text] + jobs[text][0][span] for text, span in wanted])
        return encoded, rows, [jobs[t][1] for t in texts], [jobs[t][2] for t in texts]

    def plan(self, items: Sequence[SpanItem], reading: Reading) -> tuple[RowPlan, np.ndarray]:
        """Encode `items` and lay their texts out as rows under `reading.long_texts`."""
        encoded, rows, owners, fields = self.encode(items)
        plan = plan_rows(
            encoded,
            owners,
            fields,
            max_length=self.max_length,
            long_texts=reading.long_texts,
            stride=reading.window_stride,
            causal=self.kind == "decoder",
        )
        if plan.cut_texts:
            texts = _distinct_texts(items)  # the order `encode` meets them in
            cut = {texts[k] for k in plan.cut_texts}
            hit = sum(any(text in cut for text, _ in item.texts()) for item in items)
            warnings.warn(
                f"long_texts='truncate': {hit} items have a text longer than the model's maximum"
                f" length of {self.max_length} tokens; {plan.cut_tokens} tokens were cut from"
                f" {len(plan.cut_texts)} texts. Use long_texts='window' to read them whole",
                TruncationWarning,
                stacklevel=4,
            )
        return plan, rows

    def batches(self, lengths: Sequence[int]) -> list[np.ndarray]:
        """Row indices per batch: the token budget, or `batch_size` rows when that is set."""
        if self.batch_size is not None:
            return list(length_buckets(lengths, self.batch_size, self.batch_tokens))
        return budget_batches(lengths, self.batch_tokens)

    def compute(
        self,
        items: Sequence[SpanItem],
        sites: Sequence[Site],
        reading: Reading,
        progress: ProgressCallback | None = None,
    ) -> Float[Tensor, "item site dim"]:
        """Encode, lay out rows, batch them, run the backend, and reassemble rows in item order."""
        plan, rows = self.plan(items, reading)
        first_piece = plan.first_piece
        dim = shared_dim(self, sites)  # the extraction checked the SAE sites once, at its start
        features = ItemRows(plan, rows, len(items), len(sites), dim, reading.pool)
        padding = self._padding()
        parts = list(self.layout.parts)
        lengths = [len(row.input_ids) for row in plan.rows]
        counter = ItemCounter(len(items), len(plan.rows))
        self.model.eval()

        copies = PooledCopies(features)

        def run(batch_rows: np.ndarray) -> None:
            batch = collate([plan.rows[i] for i in batch_rows], padding, parts, self.device)
            pooled = self.backend.pooled(batch, sites, reading.pool)
            pieces = np.concatenate(
                [
                    np.arange(first_piece[i], first_piece[i] + len(plan.rows[i].segments))
                    for i in batch_rows
                ]
            )
            step = ProgressStep(
                counter.advance(len(batch_rows)),
                sum(lengths[i] for i in batch_rows),
                padded_tokens(lengths, batch_rows),
            )
            copies.put(
                pieces,
                [pooled[site].detach() for site in sites],
                lambda: None if progress is None else progress(step),
            )

        limit = run_batches(self.batches(lengths), lengths, run)
        copies.finish()
        if limit is not None and limit < self.batch_tokens:
            self.batch_tokens = limit  # later calls start from what fits
        return features.result()


def _distinct_texts(items: Sequence[SpanItem]) -> list[str]:
    """Distinct texts in order of first use."""
    return list(dict.fromkeys(text for item in items for text, _ in item.texts()))


def _max_length(model: nn.Module, tokenizer: Any) -> int:
    limits = [getattr(tokenizer, "model_max_length", None)]
    model_config: Any = model.config
    config = model_config.get_text_config() if hasattr(model_config, "get_text_config") else None
    for key in ("max_position_embeddings", "n_positions"):
        limits.append(getattr(config, key, None))
    usable = [int(x) for x in limits if isinstance(x, int) and 0 < x < 1_000_000]
    return min(usable) if usable else DEFAULT_MAX_LENGTH
