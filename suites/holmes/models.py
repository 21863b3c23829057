"""The models of a Holmes run: names (loaded lazily, only when a unit needs them) or subjects.

A name is anything `load_subject` takes (`minilm`, `smollm2`, `glove:6B.50d`, a hub id or a
folder); `NAME@random` is its random-init twin (same architecture and tokenizer, seeded weights).
A `Subject` object (e.g. a random T5 built from a config) is used as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from internals import Init, Subject, canonical_name, load_subject
from suites.errors import TaskError
from suites.schema import RANDOM_SUFFIX, model_label


@dataclass
class ModelEntry:
    """One model of a run: its leaderboard label and how to get its subject."""

    label: str  # leaderboard name: the model name, with "@random" for random-init twins
    name: str
    init: str
    spec: str | None = None
    subject: Subject | None = field(default=None, repr=False)
    seed: int = 0

    def load(self) -> Subject:
        """The subject (loaded on first use)."""
        if self.subject is None:
            assert self.spec is not None
            self.subject = load_subject(self.spec, init=cast(Init, self.init), seed=self.seed)
        return self.subject

    def release(self) -> None:
        """Drop a subject this entry loaded itself (frees memory between models)."""
        if self.spec is not None:
            self.subject = None


def model_entry(model: str | Subject, seed: int = 0) -> ModelEntry:
    """A run entry for a model name (`NAME` or `NAME@random`) or a `Subject`."""
    if isinstance(model, Subject):
        label = model_label(model.name, model.init)
        return ModelEntry(label, model.name, model.init, subject=model)
    if not isinstance(model, str) or not model.strip():
        raise TaskError(
            f"model {model!r}: give a model name (e.g. minilm, glove:6B.50d) or a Subject"
        )
    spec, init = model.strip(), "pretrained"
    if spec.endswith(RANDOM_SUFFIX):
        spec, init = spec.removesuffix(RANDOM_SUFFIX), "random"
    name = canonical_name(spec)
    label = model_label(name, init)
    return ModelEntry(label, name, init, spec=spec, seed=seed)


def model_entries(models: Sequence[str | Subject], seed: int = 0) -> list[ModelEntry]:
    """Entries for every model, refusing two models with the same label."""
    entries = [model_entry(m, seed) for m in models]
    labels = [e.label for e in entries]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise TaskError(
            f"models {repeated} appear twice; each model (and each random twin) once per run"
        )
    return entries
