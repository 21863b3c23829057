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


class ExtractionMemoryError(LingprobeError, MemoryError):
    """A single row does not fit the device's memory even alone."""


class UnsupportedModelError(LingprobeError, ValueError):
    """The model cannot be read the way it was asked (e.g. a quantised model's random twin)."""


class TruncationWarning(UserWarning):
    """Texts were cut at the model's maximum length (`long_texts="truncate"`)."""
