"""The calibrated semantic test of the CC on one language model (paper §4, spec §3).

`run_semantic_test(model, tokenizer)` filters the adjective pairs to single-token comparatives for
the tokenizer, samples instances, builds every S1-S7 sentence, scores both fillers of each unique
sentence (masked LM at the mask; causal LM by sentence log-probability) and returns the scores
with the paper's tables (`suites.cc.semantic_metrics`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl
from torch import nn

from suites.cc import semantic_metrics
from suites.cc.lexicon import AdjectivePair, load_adjective_pairs, load_names, single_token_pairs
from suites.cc.schemata import sample_instances, semantic_sentences
from suites.cc.scoring import (
    CausalScore,
    LMKind,
    causal_filler_log_probs,
    lm_kind,
    masked_filler_log_probs,
    start_token_id,
)


@dataclass(frozen=True)
class SemanticConfig:
    """Size and scoring of the semantic test."""

    n_instances: int = 1000  # ours: the paper enumerated 20 pairs x 33 names (144,800 sentences)
    seed: int = 0
    causal_score: CausalScore = "sentence"  # spec §3: decoders use total sentence log-probability
    batch_size: int = 16  # ours


@dataclass(frozen=True)
class SemanticRun:
    """One model's semantic test: per-sentence scores, the dropped pairs, and how it was scored."""

    model: str
    kind: LMKind
    scores: pl.DataFrame
    dropped_pairs: pl.DataFrame
    kept_pairs: int
    conditioned_on: str | None  # causal LMs: the start token the first word is conditioned on

    def table2(self) -> pl.DataFrame:
        """Accuracy on S1/S2 and decision flips (the paper's Table 2)."""
        return semantic_metrics.table2(self.scores)

    def table4(self) -> pl.DataFrame:
        """Accuracy per calibration method (the paper's Tables 3 and 4)."""
        return semantic_metrics.table4(self.scores)

    def table5(self) -> pl.DataFrame:
        """Decision flips per calibration method (the paper's Table 5)."""
        return semantic_metrics.table5(self.scores)


def score_sentences(
    model: nn.Module,
    tokenizer: Any,
    sentences: pl.DataFrame,
    *,
    kind: LMKind | None = None,
    causal_score: CausalScore = "sentence",
    batch_size: int = 16,
    progress: bool = True,
) -> pl.DataFrame:
    """`sentences` with adj2_log_prob and ant2_log_prob; each unique sentence is scored once."""
    kind = kind or lm_kind(model)
    unique = sentences.select("text", "adj2", "ant2").unique(maintain_order=True)
    texts = unique["text"].to_list()
    fillers = list(zip(unique["adj2"].to_list(), unique["ant2"].to_list()))
    if kind == "masked":
        values = masked_filler_log_probs(
            model, tokenizer, texts, fillers, batch_size=batch_size, progress=progress
        )
    else:
        values = causal_filler_log_probs(
            model,
            tokenizer,
            texts,
            fillers,
            score=causal_score,
            batch_size=batch_size,
            progress=progress,
        )
    scored = unique.with_columns(
        pl.Series("adj2_log_prob", values[:, 0].tolist()),
        pl.Series("ant2_log_prob", values[:, 1].tolist()),
    )
    return sentences.join(scored, on=["text", "adj2", "ant2"], how="left", maintain_order="left")


def run_semantic_test(
    model: nn.Module,
    tokenizer: Any,
    *,
    model_name: str | None = None,
    pairs: Sequence[AdjectivePair] | None = None,
    names: Sequence[str] | None = None,
    config: SemanticConfig = SemanticConfig(),
    progress: bool = True,
) -> SemanticRun:
    """Run S1-S7 on a masked or causal LM (an HF model with its LM head, and its tokenizer)."""
    kind = lm_kind(model)
    name = model_name or getattr(model.config, "_name_or_path", "") or type(model).__name__
    kept, dropped = single_token_pairs(list(pairs or load_adjective_pairs()), tokenizer)
    instances = sample_instances(kept, list(names or load_names()), config.n_instances, config.seed)
    sentences = semantic_sentences(instances)
    scores = score_sentences(
        model,
        tokenizer,
        sentences,
        kind=kind,
        causal_score=config.causal_score,
        batch_size=config.batch_size,
        progress=progress,
    ).with_columns(pl.lit(name).alias("model"))
    start = start_token_id(tokenizer) if kind == "causal" else None
    return SemanticRun(
        model=name,
        kind=kind,
        scores=scores,
        dropped_pairs=dropped,
        kept_pairs=len(kept),
        conditioned_on=tokenizer.convert_ids_to_tokens(start) if start is not None else None,
    )
