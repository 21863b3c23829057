"""`SpanItem`: one probing input — a text (and optional text pair) with character spans."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from internals.errors import ItemError

CharSpan = tuple[int, int]


@dataclass(frozen=True)
class SpanItem:
    """A text with zero or more character spans, and an optional second text with its own spans.

    No spans: the whole text is pooled. One span: its pooled vector. Several spans: their pooled
    vectors concatenated. With `text_pair`, the pair's vector(s) follow the text's, so an item's
    feature width is `(max(1, len(spans)) + max(1, len(pair_spans))) * dim`.
    Spans are half-open character ranges `(start, end)` into the text.
    """

    text: str
    spans: tuple[CharSpan, ...] = ()
    text_pair: str | None = None
    pair_spans: tuple[CharSpan, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "spans", tuple((int(s), int(e)) for s, e in self.spans))
        object.__setattr__(self, "pair_spans", tuple((int(s), int(e)) for s, e in self.pair_spans))

    @property
    def segments(self) -> int:
        """How many pooled vectors this item concatenates."""
        n = max(1, len(self.spans))
        if self.text_pair is not None:
            n += max(1, len(self.pair_spans))
        return n

    def texts(self) -> list[tuple[str, tuple[CharSpan, ...]]]:
        """The (text, spans) parts in feature order."""
        parts = [(self.text, self.spans)]
        if self.text_pair is not None:
            parts.append((self.text_pair, self.pair_spans))
        return parts


def _check_spans(index: int, name: str, text: str, spans: tuple[CharSpan, ...]) -> None:
    if not text.strip():
        raise ItemError(index, f"{name} is empty or whitespace; give every item a non-empty text")
    for start, end in spans:
        if end <= start:
            raise ItemError(
                index,
                f"span ({start}, {end}) of {name} has end <= start; spans are (start, end)"
                " half-open character ranges with end > start",
            )
        if start < 0 or end > len(text):
            raise ItemError(
                index,
                f"span ({start}, {end}) lies outside {name} of length {len(text)}"
                f" ({text[:40]!r}); spans are character offsets into that text",
            )
        if not text[start:end].strip():
            raise ItemError(
                index,
                f"span ({start}, {end}) of {name} covers only whitespace"
                f" ({text[start:end]!r}); point it at the word's characters",
            )


def validate_items(items: Sequence[SpanItem]) -> int:
    """Check every item; return the common number of segments (items must agree on it)."""
    if len(items) == 0:
        raise ItemError(0, "no items were given; pass at least one SpanItem")
    width = items[0].segments
    for index, item in enumerate(items):
        if not isinstance(item, SpanItem):
            raise ItemError(index, f"expected a SpanItem, got {type(item).__name__}")
        _check_spans(index, "text", item.text, item.spans)
        if item.text_pair is not None:
            _check_spans(index, "text_pair", item.text_pair, item.pair_spans)
        elif item.pair_spans:
            raise ItemError(index, "pair_spans given without text_pair; add text_pair")
        if item.segments != width:
            raise ItemError(
                index,
                f"has {item.segments} pooled segments but item 0 has {width}; all items of"
                " one call need the same number of spans (and all or none with text_pair)",
            )
    return width
