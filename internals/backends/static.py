"""`StaticSubject`: word vectors (GloVe, word2vec) as a one-site subject.

Texts are split into words (`\\w+` runs joined by inner hyphens/apostrophes, and single
punctuation marks); a span takes the words that overlap it, looked up exactly, then lowercased.
Out-of-vocabulary words follow `oov`: "zero" (a zero vector in the pooled average), "skip" (left
out; a span of only unknown words is zero) or "error". Pooling reuses `pool_spans` over words
(through `pool_site`, so an SAE site encodes every word vector before it is pooled).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

import numpy as np
import torch
from jaxtyping import Float
from torch import Tensor

from internals.errors import ItemError
from internals.items import CharSpan, SpanItem
from internals.pool import TokenSegments
from internals.progress import ProgressCallback, ProgressStep
from internals.reading import Reading
from internals.sae_sites import pool_site
from internals.sites import Site
from internals.store import fingerprint
from internals.subject import Subject
from internals.vectors import VectorTable

log = logging.getLogger(__name__)
WORD = re.compile(r"\w+(?:[-'’]\w+)*|[^\w\s]")
OOV_POLICIES = ("zero", "skip", "error")


def words_of(text: str) -> list[tuple[int, int, str]]:
    """(start, end, word) for every word of `text`."""
    return [(m.start(), m.end(), m.group()) for m in WORD.finditer(text)]


class StaticSubject(Subject):
    """A table of word vectors read as features; its only site is `static.0`."""

    def __init__(self, table: VectorTable, *, oov: str = "zero", init: str = "pretrained") -> None:
        if oov not in OOV_POLICIES:
            raise ValueError(f"oov={oov!r}; choose one of {', '.join(OOV_POLICIES)}")
        self.table, self.oov = table, oov
        self.name, self.init, self.kind = table.source, init, "static"
        self.dim = table.dim
        self.device = torch.device("cpu")
        identity = {"static": table.source, "digest": table.digest, "init": init, "oov": oov}
        self.fingerprint = fingerprint(identity)
        self.oov_report: dict[str, int] = {"words": 0, "oov": 0}

    @property
    def part_layers(self) -> dict[str, int]:
        """One part with one site."""
        return {"static": 0}

    def _segment_rows(
        self, text: str, spans: tuple[CharSpan, ...], index: int, field: str
    ) -> list[list[int]]:
        words = words_of(text)
        wanted = spans or ((0, len(text)),)
        rows: list[list[int]] = []
        for start, end in wanted:
            inside = [w for (s, e, w) in words if s < end and e > start]
            if not inside:
                raise ItemError(index, f"span ({start}, {end}) of {field} holds no word")
            ids = [self.table.lookup(w) for w in inside]
            unknown = [w for w, r in zip(inside, ids) if r < 0]
            if unknown and self.oov == "error":
                raise ItemError(
                    index,
                    f"{field} words {unknown[:5]} are not in {self.name}; use oov='zero'"
                    " or oov='skip' to pool around them",
                )
            self.oov_report["words"] += len(ids)
            self.oov_report["oov"] += len(unknown)
            if self.oov == "skip":
                ids = [r for r in ids if r >= 0] or [-1]
            rows.append(ids)
        return rows

    def compute(
        self,
        items: Sequence[SpanItem],
        sites: Sequence[Site],
        reading: Reading,
        progress: ProgressCallback | None = None,
    ) -> Float[Tensor, "item site dim"]:
        """Look up every segment's words and pool them (one gather for all items).

        Word vectors have no maximum length, so `reading.long_texts` has nothing to do here.
        """
        self.oov_report = {"words": 0, "oov": 0}
        segments: list[list[int]] = []
        for index, item in enumerate(items):
            for field, (text, spans) in zip(("text", "text_pair"), item.texts()):
                segments.extend(self._segment_rows(text, spans, index, field))
        flat = np.concatenate([np.asarray(s, dtype=np.int64) for s in segments])
        known = flat >= 0
        unique, inverse = np.unique(flat[known], return_inverse=True)
        vectors = np.zeros((len(flat), self.dim), dtype=np.float32)  # OOV rows stay zero
        vectors[np.nonzero(known)[0]] = np.asarray(self.table.matrix[unique])[inverse]
        hidden = torch.from_numpy(vectors).unsqueeze(0)
        lengths = torch.tensor([len(s) for s in segments], dtype=torch.long)
        words = TokenSegments(torch.arange(len(flat)), lengths)
        pooled = torch.stack(
            [pool_site(site, hidden, words, reading.pool).float().cpu() for site in sites], 1
        )
        if self.oov_report["oov"]:
            log.info(
                "%s: %d of %d words out of vocabulary",
                self.name,
                self.oov_report["oov"],
                self.oov_report["words"],
            )
        if progress is not None:
            progress(ProgressStep(len(items)))
        width = len(segments) // len(
            items
        )  # [item x width, site, dim] -> [item, site, width x dim]
        pooled = pooled.view(len(items), width, len(sites), -1).transpose(1, 2)
        return pooled.reshape(len(items), len(sites), -1)
