"""What steering does to a language model: its LM-loss change and a chosen token's logit change.

The loss is `internals.intervene.lm_loss` with the steering edit at the site (the same
measurement as amnesic probing: nats per scored token, the unedited model as the baseline). The
token's logit is averaged over every position of every text, read with `steer`'s hook; both
measure the same edit (tests compare the two paths' losses).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl
import torch
from torch import Tensor

from internals.errors import InterventionError
from internals.intervene import lm_loss
from internals.sites import Site
from internals.steer import steer, steering
from internals.transformer_subject import TransformerSubject


def steering_effect(
    subject: TransformerSubject,
    texts: Sequence[str],
    site: Site,
    direction: Tensor,
    alphas: Sequence[float] = (1.0,),
    *,
    token: str | int | None = None,
    batch_size: int = 16,
    progress: bool = True,
) -> pl.DataFrame:
    """The LM loss on `texts` with `alpha * direction` added at `site`, for each alpha.

    Columns: model, site_name, layer, alpha, base_loss, loss, delta (nats per token; delta =
    loss - base_loss) and, given `token` (a token id, or a string that is one token), token,
    base_logit, logit, logit_delta (that token's logit, mean over every position of every text).
    """
    if not alphas:
        raise InterventionError("alphas: no value; give at least one, e.g. alphas=(1.0, 4.0)")
    token_id = None if token is None else _token_id(subject, token)
    base = lm_loss(subject, texts, batch_size=batch_size, progress=progress).mean
    base_logit = None if token_id is None else _mean_logit(subject, texts, token_id)
    rows = []
    for alpha in alphas:
        edit = steering(subject, site, direction, alpha)
        loss = lm_loss(subject, texts, {site: edit}, batch_size=batch_size, progress=progress)
        row: dict[str, float | int | None] = {"alpha": float(alpha), "base_loss": base}
        row["loss"] = loss.mean
        if token_id is not None:
            with steer(subject, site, direction, alpha):
                logit = _mean_logit(subject, texts, token_id)
            row |= {"token": token_id, "base_logit": base_logit, "logit": logit}
        rows.append(row)
    frame = pl.DataFrame(rows).with_columns(
        model=pl.lit(subject.name), site_name=pl.lit(site.name), layer=pl.lit(site.layer)
    )
    frame = frame.with_columns(delta=pl.col("loss") - pl.col("base_loss"))
    if token_id is not None:
        frame = frame.with_columns(logit_delta=pl.col("logit") - pl.col("base_logit"))
    first = ["model", "site_name", "layer", "alpha", "base_loss", "loss", "delta"]
    return frame.select(*first, pl.exclude(first))


def _token_id(subject: TransformerSubject, token: str | int) -> int:
    """A token id of the subject's vocabulary; a string must encode to exactly one token."""
    size = len(subject.tokenizer)
    if isinstance(token, str):
        ids = subject.tokenizer(token, add_special_tokens=False)["input_ids"]
        if len(ids) != 1:
            raise InterventionError(
                f"token={token!r} is {len(ids)} tokens for {subject.name}; give a string that is"
                " one token (often with its leading space, e.g. ' good') or a token id"
            )
        return int(ids[0])
    if isinstance(token, bool) or not 0 <= token < size:
        raise InterventionError(f"token={token!r}: give a token id 0..{size - 1} or a string")
    return int(token)


@torch.no_grad()
def _mean_logit(subject: TransformerSubject, texts: Sequence[str], token: int) -> float:
    """The token's logit, mean over every position of every text (one text per forward)."""
    total, count = 0.0, 0
    subject.model.eval()
    for text in texts:
        ids = subject.tokenizer(text, return_tensors="pt")["input_ids"].to(subject.device)
        logits = subject.model(input_ids=ids).logits[0, :, token]
        total += float(logits.double().sum())
        count += logits.numel()
    return total / max(1, count)
