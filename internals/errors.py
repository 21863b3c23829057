"""Exception types of `internals`: each names the bad value and the fix."""

from __future__ import annotations

from collections.abc import Callable

from lingprobe.errors import LingprobeError


class ItemError(LingprobeError, ValueError):
    """An input item is malformed (span outside its text, empty text, end <= start, ...).

    `index` is the item's position in the list given to `features`; None when the item is
    refused as it is built (`SpanItem(...)`), before it belongs to a list.
    """

    def __init__(self, index: int | None, message: str) -> None:
        self.index, self.detail = index, message
        where = f"item {index}" if index is not None else "SpanItem"
        super().__init__(f"{where}: {message}")

    def moved(self, position: Callable[[int], int]) -> ItemError:
        """The same error for the item at `position(index)` of the whole item list."""
        return ItemError(None if self.index is None else position(self.index), self.detail)


class OptionError(LingprobeError, ValueError):
    """An argument has a value lingprobe cannot use; the message names it and the choices."""


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


class InterventionError(LingprobeError, ValueError):
    """An intervention cannot run: no LM head, a site that cannot be edited, a bad objective."""
