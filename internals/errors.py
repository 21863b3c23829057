"""Exception types of `internals`: each names the bad value and the fix."""

from __future__ import annotations

from lingprobe.errors import LingprobeError


class ItemError(LingprobeError, ValueError):
    """An input item is malformed (span outside its text, empty text, end <= start, ...)."""

    def __init__(self, index: int, message: str) -> None:
        self.index, self.detail = index, message
        super().__init__(f"item {index}: {message}")

    def shifted(self, offset: int) -> ItemError:
        """The same error for an item counted from the start of the whole item list."""
        return ItemError(self.index + offset, self.detail)


class SiteError(LingprobeError, ValueError):
    """A requested site does not exist in the subject."""


class TokenizerError(LingprobeError, ValueError):
    """The tokenizer cannot do what alignment needs (e.g. it returns no character offsets)."""


class VectorsFileError(LingprobeError, ValueError):
    """A static word-vector file is malformed."""


class ModelNotFoundError(LingprobeError, LookupError):
    """A model spec names nothing that can be loaded here."""


class InterventionError(LingprobeError, ValueError):
    """An intervention cannot run: no LM head, a site that cannot be edited, a bad objective."""
