"""Interventions: rewrite the hidden state at sites during the forward pass, and the LM loss.

An edit is any callable `[..., dim] -> [..., dim]` (e.g. one site of a concept eraser). Inside
one nnsight trace, each edited site's value (the same tensor `features` reads there:
`hidden_states[k]`) is replaced by `edit(value)` before the model goes on, so every later layer
and the head compute on the edited stream (amnesic probing, Elazar et al. 2021). `lm_loss`
scores texts with the model's own head: next-token loss for decoders, masked-token loss for
masked LMs (a seeded share of each text's tokens replaced by the mask token). The subject must be
loaded with its head (`load_subject(..., head="lm")`). `steer` (from `internals.steer`) adds
`alpha * direction` at a site in every forward pass inside its block.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import nnsight
import numpy as np
import torch
from jaxtyping import Float, Int
from torch import Tensor
from tqdm.auto import tqdm

from internals.backends.sight import SightBackend
from internals.batching import Padding, collate, length_buckets
from internals.errors import InterventionError
from internals.items import SpanItem
from internals.sites import Site, check
from internals.steer import Steering, steer  # `steer` adds a direction at a site
from internals.transformer_subject import TransformerSubject

__all__ = ["Edit", "LMLoss", "Objective", "Steering", "lm_loss", "steer"]

Edit = Callable[[Tensor], Tensor]
Objective = Literal["auto", "causal", "masked"]


@dataclass(frozen=True)
class LMLoss:
    """Summed negative log-likelihood (nats) and scored tokens per text."""

    nll: Float[Tensor, " text"]
    tokens: Int[Tensor, " text"]

    @property
    def mean(self) -> float:
        """Mean loss per scored token over all texts."""
        return float(self.nll.sum() / self.tokens.sum().clamp(min=1))


def lm_loss(
    subject: TransformerSubject,
    texts: Sequence[str],
    edits: Mapping[Site, Edit] | None = None,
    *,
    objective: Objective = "auto",
    mask_rate: float = 0.15,
    seed: int = 0,
    batch_size: int = 16,
    progress: bool = True,
) -> LMLoss:
    """The model's loss on `texts`, with the hidden state at each site of `edits` rewritten.

    objective: "causal" (next token), "masked" (BERT-style: `mask_rate` of each text's
    non-special tokens, at least one, drawn from `seed` and the text's position, become the
    mask token), or "auto" (masked for encoders, causal otherwise).
    """
    if not isinstance(subject, TransformerSubject):
        raise InterventionError(
            f"lm_loss needs a transformer subject, got {type(subject).__name__}"
        )
    chosen = _objective(subject, objective)
    model: Any = subject.model
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if head is None:
        raise InterventionError(
            f"{subject.name} was loaded without its LM head; load it with"
            " load_subject(..., head='lm') to score the model's loss"
        )
    sites = sorted(edits or {}, key=lambda s: (list(subject.layout.parts).index(s.part), s.layer))
    if sites:
        check(subject, sites)
        bad = [s.name for s in sites if s.stream != "resid_post"]
        if bad:
            raise InterventionError(f"sites {bad}: only resid_post sites can be edited")
    encoded = subject.encode([SpanItem(t) for t in texts])[0]  # distinct texts, in order
    tokenizer = subject.tokenizer
    pad = tokenizer.pad_token_id
    pad = pad if pad is not None else (tokenizer.eos_token_id or 0)
    padding = Padding(int(pad), "right", False, None)
    envoy = _envoy(subject) if sites else None
    nll = torch.zeros(len(encoded), dtype=torch.float64)
    counts = torch.zeros(len(encoded), dtype=torch.int64)
    lengths = [len(e.input_ids) for e in encoded]
    bar = tqdm(total=len(encoded), disable=not progress, desc="lm loss", unit="text")
    subject.model.eval()
    parts = list(subject.layout.parts)
    for index in length_buckets(lengths, batch_size, subject.batch_tokens):
        batch = collate([encoded[i] for i in index], padding, parts, torch.device("cpu"))
        inputs = dict(batch.inputs)
        if chosen == "masked":
            inputs["input_ids"], targets = _masked(subject, encoded, index, inputs, mask_rate, seed)
        else:
            targets = _next_tokens(inputs)
        inputs = {k: v.to(subject.device) for k, v in inputs.items()}
        logits = _logits(subject, envoy, inputs, sites, edits or {})
        loss = torch.nn.functional.cross_entropy(
            logits.float().flatten(0, 1),
            targets.to(logits.device).flatten(),
            ignore_index=-100,
            reduction="none",
        ).view(targets.shape)
        rows = torch.from_numpy(index)
        nll[rows] = loss.double().sum(-1).cpu()
        counts[rows] = (targets != -100).sum(-1)
        bar.update(len(index))
    bar.close()
    order = torch.from_numpy(_rows(texts))
    return LMLoss(nll[order], counts[order])


def _objective(subject: TransformerSubject, objective: Objective) -> str:
    if objective not in ("auto", "causal", "masked"):
        raise InterventionError(f"objective={objective!r}; choose auto, causal or masked")
    if subject.kind == "encoder-decoder":
        raise InterventionError("lm_loss scores encoder-only and decoder-only LMs")
    if objective == "auto":
        return "masked" if subject.kind == "encoder" else "causal"
    if objective == "masked" and subject.tokenizer.mask_token_id is None:
        raise InterventionError(f"{subject.name} has no mask token; use objective='causal'")
    return objective


def _rows(texts: Sequence[str]) -> np.ndarray:
    """Encoded-text row of each text (duplicates share one forward)."""
    first: dict[str, int] = {}
    for text in texts:
        first.setdefault(text, len(first))
    return np.array([first[t] for t in texts])


def _next_tokens(inputs: dict[str, Tensor]) -> Tensor:
    """Targets at each position: the next token, -100 at the end and on padding."""
    ids, mask = inputs["input_ids"], inputs["attention_mask"]
    targets = torch.full_like(ids, -100)
    targets[:, :-1] = torch.where(mask[:, 1:].bool(), ids[:, 1:], -100)
    return targets


def _masked(
    subject: TransformerSubject,
    encoded: list,
    index: np.ndarray,
    inputs: dict[str, Tensor],
    rate: float,
    seed: int,
) -> tuple[Tensor, Tensor]:
    """Inputs with the drawn positions masked, and the original tokens there as targets."""
    ids = inputs["input_ids"].clone()
    targets = torch.full_like(ids, -100)
    for row, i in enumerate(index.tolist()):
        positions = np.concatenate(encoded[i].segments)  # the text's own (non-special) tokens
        rng = np.random.default_rng([seed, i])
        take = max(1, round(rate * len(positions)))
        chosen = torch.from_numpy(rng.choice(positions, size=take, replace=False))
        targets[row, chosen] = ids[row, chosen]
        ids[row, chosen] = int(subject.tokenizer.mask_token_id)
    return ids, targets


def _envoy(subject: TransformerSubject) -> Any:
    """The subject's nnsight wrapper (its own when the backend is nnsight)."""
    if isinstance(subject.backend, SightBackend):
        return subject.backend.envoy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return nnsight.NNsight(subject.model)


def _module(envoy: Any, path: str) -> Any:
    for part in path.split("."):
        envoy = envoy[int(part)] if part.isdigit() else getattr(envoy, part)
    return envoy


@torch.no_grad()
def _logits(
    subject: TransformerSubject,
    envoy: Any,
    inputs: dict[str, Tensor],
    sites: list[Site],
    edits: Mapping[Site, Edit],
) -> Tensor:
    """The head's logits, with every site's value replaced by its edit inside one trace."""
    if not sites:
        return subject.model(**inputs).logits
    with envoy.trace(**inputs):
        for site in sites:
            part = subject.layout.parts[site.part]
            layers = _module(envoy, part.layers)
            edit = edits[site]
            if site.layer == 0:
                layers[0].input = edit(layers[0].input)
            elif site.layer == part.n_layers and part.final_norm is not None:
                norm = _module(envoy, part.final_norm)
                norm.output = edit(norm.output)
            else:
                block = layers[site.layer - 1]
                out = block.output
                if isinstance(out, tuple | list):
                    block.output = (edit(out[0]), *out[1:])
                else:
                    block.output = edit(out)
        logits = nnsight.save(envoy.output.logits)
    return logits
