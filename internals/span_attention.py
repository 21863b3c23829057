"""Attention patterns summarised per span: how much each span of an item attends to each span.

For an item with S spans and a head site (`sites.every_head`), the feature is S x S values,
row-major: entry `a * S + b` is the attention that span a's tokens (the queries) give to span
b's tokens (the keys), summed over b's tokens and averaged over a's. Each entry lies in [0, 1];
a row need not sum to 1 (the rest goes to tokens outside the spans). A word task (S = 1) has one
value per head, the share of the word's attention that stays inside it; an edge task (S = 2)
has four, `[a->a, a->b, b->a, b->b]`. In a causal model a span never attends to a later one.

The pattern is the softmax output of the model's own eager attention (Hugging Face
`output_attentions=True`, the attention implementation switched to "eager" for the call and
restored after), one text per forward pass, so it does not depend on the hook backend. Each
distinct text runs once, however many items ask about it. Texts longer than the model's
maximum length and items with a `text_pair` are refused (their spans would sit in different
forward passes).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
from jaxtyping import Float
from torch import Tensor

from internals import sites as site_rules
from internals.errors import ItemError, SiteError, UnsupportedModelError
from internals.items import SpanItem, validate_items
from internals.sites import HEAD, Site, SiteSpec
from internals.transformer_subject import TransformerSubject


def span_attention(
    subject: TransformerSubject, items: Sequence[SpanItem], heads: SiteSpec | None = None
) -> Float[Tensor, "item site dim"]:
    """Per item and head site, the span-to-span attention `[item, site, spans x spans]`.

    `heads`: head sites (default every head of every layer, `sites.every_head(subject)`).

    Examples:
        >>> from internals import SpanItem, load_subject, sites
        >>> minilm = load_subject("sentence-transformers/all-MiniLM-L6-v2")
        >>> edge = [SpanItem("The cat sat on the mat.", spans=((4, 7), (19, 22)))]
        >>> span_attention(minilm, edge, sites.every_head(minilm, layers=[1])).shape
        torch.Size([1, 12, 4])
    """
    width = validate_items(items)
    chosen = _head_sites(subject, heads)
    for index, item in enumerate(items):
        if item.text_pair is not None:
            raise ItemError(
                index,
                "span_attention reads spans of one text; this item has a text_pair, whose spans"
                " run in another forward pass. Join the texts into one, or drop text_pair",
            )
    encoded, rows, _, _ = subject.encode(items)
    counts = [len(text.segments) for text in encoded]
    text_of = np.repeat(np.arange(len(encoded)), counts)
    local = np.arange(len(text_of)) - np.repeat(np.cumsum(counts) - counts, counts)
    item_rows = rows.reshape(len(items), width)
    out = torch.empty(len(items), len(chosen), width * width)
    layers = sorted({site.layer for site in chosen})
    with _eager_attention(subject):
        for t, text in enumerate(encoded):
            asking = np.nonzero(text_of[item_rows[:, 0]] == t)[0]
            if len(asking) == 0:
                continue
            if len(text.input_ids) > subject.max_length:
                raise ItemError(
                    int(asking[0]),
                    f"text of {len(text.input_ids)} tokens is longer than the model's maximum"
                    f" of {subject.max_length}; span_attention reads whole texts only, shorten it",
                )
            pattern = _span_pattern(subject, text.input_ids, text.segments, layers)
            for asker in asking.tolist():
                spans = torch.from_numpy(local[item_rows[asker]])
                for k, site in enumerate(chosen):
                    square = pattern[site.layer][site.head][spans][:, spans]
                    out[asker, k] = square.reshape(-1)
    return out


def _head_sites(subject: TransformerSubject, heads: SiteSpec | None) -> list[Site]:
    if subject.kind == "encoder-decoder":
        raise UnsupportedModelError(
            "span_attention reads encoder-only and decoder-only models (an encoder-decoder has"
            " self- and cross-attention); use an encoder or a decoder"
        )
    chosen = site_rules.every_head(subject) if heads is None else site_rules.resolve(subject, heads)
    others = [site.name for site in chosen if site.stream != HEAD]
    if others:
        raise SiteError(
            f"span_attention summarises attention heads; {others[0]} is not a head site. Give"
            " head sites, e.g. sites.every_head(subject, layers=[6])"
        )
    return chosen


def _span_pattern(
    subject: TransformerSubject,
    input_ids: list[int],
    segments: list[np.ndarray],
    layers: list[int],
) -> dict[int, Float[Tensor, "head span span"]]:
    """Per layer, `[head, span, span]` attention between all segments of one text."""
    n_tokens = len(input_ids)
    queries = torch.zeros(len(segments), n_tokens, dtype=torch.float64)
    keys = torch.zeros(len(segments), n_tokens, dtype=torch.float64)
    for s, positions in enumerate(segments):
        index = torch.from_numpy(np.asarray(positions, dtype=np.int64))
        queries[s, index] = 1.0 / len(positions)
        keys[s, index] = 1.0
    ids = torch.tensor([input_ids], device=subject.device)
    with torch.no_grad():
        attentions = subject.model(input_ids=ids, output_attentions=True).attentions
    return {
        layer: (queries @ attentions[layer - 1][0].double().cpu() @ keys.T).float()
        for layer in layers
    }


@contextmanager
def _eager_attention(subject: TransformerSubject) -> Iterator[None]:
    """The model on eager attention (which returns its weights) for the block, then as before."""
    model: Any = subject.model
    before = getattr(model.config, "_attn_implementation", None)
    try:
        model.set_attn_implementation("eager")
    except (AttributeError, ValueError) as error:
        raise UnsupportedModelError(
            "span_attention needs the model's attention weights (eager attention), which"
            f" {type(model).__name__} cannot switch to ({error})"
        ) from None
    try:
        yield
    finally:
        if before is not None and before != "eager":
            model.set_attn_implementation(before)
