"""Amnesic probing (Elazar et al. 2021) on a language model: erase a concept at a site during the
forward pass and measure the LM loss, against a random-direction erasure of the same rank.

The eraser (LEACE or INLP, fitted per site on the words' pooled features) is applied to every
token's hidden state at the site; `internals.intervene.lm_loss` rewrites the residual stream
there inside the forward pass and scores the model's own head.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import polars as pl
import torch

from internals import InterventionError, Site, Subject, TransformerSubject, lm_loss
from probes.erasure import AffineEraser, fit_inlp, fit_leace, random_eraser
from suites.structural.data import Treebank

Method = Literal["leace", "inlp"]


def upos_ids(bank: Treebank) -> tuple[torch.Tensor, list[str]]:
    """UPOS class ids per word (classes sorted by name)."""
    labels = sorted(set(bank.upos))
    index = {label: i for i, label in enumerate(labels)}
    return torch.tensor([index[u] for u in bank.upos]), labels


def fit_concept_eraser(
    feats: torch.Tensor, bank: Treebank, method: Method, *, dev_fraction: float = 0.1
) -> AffineEraser:
    """An eraser of UPOS per site: LEACE on every word, or INLP (dev: the last sentences)."""
    concept, _ = upos_ids(bank)
    if method == "leace":
        return fit_leace(feats, concept)
    n_dev = max(1, round(dev_fraction * len(bank)))
    dev_words = int(bank.trees.lengths[-n_dev:].sum())
    codes = torch.zeros(len(concept), dtype=torch.long)
    codes[-dev_words:] = 1
    return fit_inlp(feats, concept, codes).eraser


def run_amnesic(
    subject: Subject,
    bank: Treebank,
    texts: Sequence[str],
    sites: Sequence[Site],
    *,
    method: Method = "leace",
    seed: int = 0,
    store: str | Path | None = None,
    progress: bool = True,
) -> pl.DataFrame:
    """LM loss on `texts` with UPOS erased at each site (fitted on `bank`), one site at a time,
    next to the same-rank random erasure and the unedited model.

    Columns: model, init, site_name, layer, eraser, rank, base_loss, loss, delta (nats/token).
    """
    if not isinstance(subject, TransformerSubject):
        raise InterventionError(f"amnesic probing needs a language model, not {subject.name}")
    feats = subject.features(list(bank.items), list(sites), store=store, progress=progress)
    eraser = fit_concept_eraser(feats, bank, method)
    control = random_eraser(eraser, seed)
    base = lm_loss(subject, texts, progress=progress).mean
    rows = []
    for i, site in enumerate(sites):
        for name, chosen in ((method, eraser), ("random", control)):
            loss = lm_loss(subject, texts, {site: chosen.site(i)}, progress=progress).mean
            rank = int(chosen.ranks[i])
            rows.append((subject.name, subject.init, site.name, site.layer, name, rank, base, loss))
    frame = pl.DataFrame(
        rows,
        schema={
            "model": pl.Utf8,
            "init": pl.Utf8,
            "site_name": pl.Utf8,
            "layer": pl.Int64,
            "eraser": pl.Utf8,
            "rank": pl.Int64,
            "base_loss": pl.Float64,
            "loss": pl.Float64,
        },
        orient="row",
    )
    return frame.with_columns(delta=pl.col("loss") - pl.col("base_loss"))
