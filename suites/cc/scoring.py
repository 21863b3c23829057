"""Scoring the two fillers of a sentence with `[MASK]`: masked LMs and causal LMs alike.

Masked LM: log P(filler | sentence) at the mask (the filler must be one token). Causal LM: the
sentence is completed with each filler and scored by the total log-probability of its tokens
(spec §3), or, with `causal_score="continuation"`, by log P(filler and the rest | prefix) (the
same decision, since the prefix is shared; it differs only under calibration, where contexts'
prefixes differ). A causal LM conditions the first token on a start token: the tokenizer's BOS,
else its EOS (a document boundary for GPT-2-style models), else none, in which case the first
token is left unscored. The same rule holds for both fillers and every sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import torch
from jaxtyping import Float
from torch import Tensor, nn
from tqdm.auto import tqdm

from suites.cc.errors import ScoringError
from suites.cc.lexicon import filler_token_id
from suites.cc.schemata import MASK

LMKind = Literal["masked", "causal"]
CausalScore = Literal["sentence", "continuation"]


def lm_kind(model: nn.Module) -> LMKind:
    """ "masked" for `*ForMaskedLM`, "causal" for `*ForCausalLM` / `*LMHeadModel`."""
    name = type(model).__name__
    if name.endswith("ForMaskedLM"):
        return "masked"
    if name.endswith(("ForCausalLM", "LMHeadModel")):
        return "causal"
    raise ScoringError(
        f"{name} is neither a masked nor a causal LM; load it with an LM head"
        " (load_subject(spec, head='lm')) or pass a *ForMaskedLM / *ForCausalLM model"
    )


def start_token_id(tokenizer: Any) -> int | None:
    """The token a causal LM's first word is conditioned on: BOS, else EOS, else None."""
    for candidate in (tokenizer.bos_token_id, tokenizer.eos_token_id):
        if candidate is not None:
            return int(candidate)
    return None


def _device(model: nn.Module) -> torch.device:
    return next(model.parameters()).device


def _filler_ids(tokenizer: Any, words: set[str]) -> dict[str, int]:
    ids = {}
    for word in sorted(words):
        token = filler_token_id(tokenizer, word)
        if token is None:
            raise ScoringError(
                f"filler {word!r} is several tokens ({tokenizer.tokenize(' ' + word)}) for this"
                " masked LM; drop its pair with suites.cc.single_token_pairs"
            )
        ids[word] = token
    return ids


@torch.no_grad()
def masked_filler_log_probs(
    model: nn.Module,
    tokenizer: Any,
    texts: Sequence[str],
    fillers: Sequence[tuple[str, ...]],
    *,
    batch_size: int = 32,
    progress: bool = True,
) -> Float[Tensor, "item filler"]:
    """log P(filler at the mask) for each text (one `[MASK]` each) and each of its fillers."""
    if tokenizer.mask_token is None:
        raise ScoringError("the tokenizer has no mask token; a masked LM test needs one")
    ids = _filler_ids(tokenizer, {w for row in fillers for w in row})
    device, out = _device(model), []
    for start in tqdm(range(0, len(texts), batch_size), disable=not progress, desc="masked LM"):
        chunk = [t.replace(MASK, tokenizer.mask_token) for t in texts[start : start + batch_size]]
        enc = tokenizer(chunk, padding=True, return_tensors="pt").to(device)
        where = enc["input_ids"] == tokenizer.mask_token_id
        bad = (where.sum(dim=1) != 1).nonzero().flatten().tolist()
        if bad:
            raise ScoringError(f"text {chunk[bad[0]]!r} has not exactly one mask; put one {MASK}")
        logits = model(**enc).logits[where].float()  # [batch, vocab]
        log_probs = logits.log_softmax(dim=-1)
        wanted = torch.tensor(
            [[ids[w] for w in row] for row in fillers[start : start + batch_size]], device=device
        )
        out.append(log_probs.gather(1, wanted).cpu())
    return torch.cat(out).double()


def _encode_completion(
    tokenizer: Any, text: str, word: str, start: int | None
) -> tuple[list[int], int]:
    """Token ids of the completed sentence (with the start token) and where the filler begins."""
    cut = text.index(MASK)
    prefix = tokenizer(text[:cut].rstrip(), add_special_tokens=False)["input_ids"]
    ids = tokenizer(text.replace(MASK, word), add_special_tokens=False)["input_ids"]
    if ids[: len(prefix)] != prefix:
        raise ScoringError(f"the tokenizer merges {word!r} with the text before it in {text!r}")
    lead = [] if start is None else [start]
    return lead + list(ids), len(lead) + len(prefix)


@torch.no_grad()
def causal_filler_log_probs(
    model: nn.Module,
    tokenizer: Any,
    texts: Sequence[str],
    fillers: Sequence[tuple[str, ...]],
    *,
    score: CausalScore = "sentence",
    batch_size: int = 16,
    progress: bool = True,
) -> Float[Tensor, "item filler"]:
    """Log-probability of each text completed with each filler (see the module docstring)."""
    if score not in ("sentence", "continuation"):
        raise ScoringError(f"causal score {score!r}; choose 'sentence' or 'continuation'")
    start = start_token_id(tokenizer)
    jobs = [
        _encode_completion(tokenizer, t, w, start) for t, row in zip(texts, fillers) for w in row
    ]
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    device, scores = _device(model), []
    for first in tqdm(range(0, len(jobs), batch_size), disable=not progress, desc="causal LM"):
        batch = jobs[first : first + batch_size]
        width = max(len(ids) for ids, _ in batch)
        input_ids = torch.full((len(batch), width), pad, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        scored = torch.zeros((len(batch), width - 1), dtype=torch.bool)
        for row, (ids, filler_at) in enumerate(batch):
            input_ids[row, : len(ids)] = torch.tensor(ids)
            mask[row, : len(ids)] = 1
            begin = filler_at if score == "continuation" else 1
            scored[row, begin - 1 : len(ids) - 1] = True  # position t predicts token t + 1
        logits = model(input_ids=input_ids.to(device), attention_mask=mask.to(device)).logits
        logits = logits[:, :-1].float()
        targets = input_ids[:, 1:].to(device)
        token_lp = logits.gather(-1, targets[..., None]).squeeze(-1) - logits.logsumexp(dim=-1)
        kept = torch.where(scored.to(device), token_lp.double(), 0.0)
        scores.append(kept.sum(dim=1).cpu())
    return torch.cat(scores).view(len(texts), -1)
