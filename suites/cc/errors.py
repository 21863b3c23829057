"""Exception types of the comparative-correlative suite; each names the bad value and the fix."""

from __future__ import annotations

from lingprobe.errors import LingprobeError


class VocabularyError(LingprobeError, ValueError):
    """A grammar vocabulary, adjective-pair or name file is malformed or too small."""


class CorpusError(LingprobeError, ValueError):
    """A user-supplied labelled-sentence file is malformed or cannot be split."""


class ScoringError(LingprobeError, ValueError):
    """A language model or filler word cannot be scored the way the semantic test needs."""
