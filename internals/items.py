"""`SpanItem`: one probing input — a text (and optional text pair) with character spans."""

from __future__ import annotations

import operator
import unicodedata
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
        _check_text("text", self.text)
        if self.text_pair is not None:
            _check_text("text_pair", self.text_pair)
        object.__setattr__(self, "spans", _span_tuple("spans", self.spans))
        object.__setattr__(self, "pair_spans", _span_tuple("pair_spans", self.pair_spans))

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


def _check_text(name: str, text: object) -> None:
    if isinstance(text, bytes | bytearray):
        raise ItemError(
            None,
            f"{name} is bytes ({bytes(text[:30])!r}); decode it to str first, e.g."
            " text.decode('utf-8')",
        )
    if not isinstance(text, str):
        raise ItemError(
            None,
            f"{name} is a {type(text).__name__} ({text!r:.60}); give the text as a str"
            " (convert numbers or missing values in the data before building items)",
        )


def _span_tuple(name: str, spans: object) -> tuple[CharSpan, ...]:
    """Spans as a tuple of (start, end) int pairs; anything else refused, never truncated."""
    if isinstance(spans, str | bytes) or not isinstance(spans, Sequence):
        raise ItemError(
            None, f"{name}={spans!r:.60} is not a sequence of (start, end) pairs, e.g. ((4, 7),)"
        )
    if len(spans) == 2 and all(hasattr(x, "__index__") for x in spans):
        raise ItemError(
            None,
            f"{name}={tuple(spans)!r} is one bare pair; spans is a sequence of pairs: write"
            f" {name}=({tuple(spans)!r},)",
        )
    pairs = []
    for span in spans:
        if isinstance(span, str | bytes) or not isinstance(span, Sequence) or len(span) != 2:
            raise ItemError(None, f"{name}: {span!r:.60} is not a (start, end) pair")
        pairs.append((_offset(name, span, span[0]), _offset(name, span, span[1])))
    return tuple(pairs)


def _offset(name: str, span: object, value: object) -> int:
    if not isinstance(value, bool):
        try:
            return operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            pass
    raise ItemError(
        None,
        f"{name}: bound {value!r} of {span!r} is a {type(value).__name__}; span bounds are"
        " integer character offsets (convert them yourself, e.g. int(round(x)), if that is meant)",
    )


def invisible(text: str) -> bool:
    """Whether `text` is only whitespace and zero-width or other format characters (Unicode
    category Cf, e.g. U+200B), which tokenizers map to no token."""
    return all(c.isspace() or unicodedata.category(c) == "Cf" for c in text)


def _check_content(index: int, name: str, text: str) -> None:
    if not text.strip():
        raise ItemError(index, f"{name} is empty or whitespace; give every item a non-empty text")
    if invisible(text):
        raise ItemError(
            index,
            f"{name} is only zero-width or other invisible format characters ({text[:8]!r}),"
            " so it has no tokens; give every item visible text",
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ItemError(
            index,
            f"{name} holds a lone surrogate {text[error.start]!r} at character {error.start},"
            " which no tokenizer can encode; it usually comes from decoding bytes with"
            " errors='surrogateescape': decode the source with errors='replace' or remove it",
        ) from None


def _check_spans(
    index: int, name: str, text: str, spans: tuple[CharSpan, ...], seen: set[str]
) -> None:
    if text not in seen:  # a text's own checks once, however many items share it
        _check_content(index, name, text)
        seen.add(text)
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
    if isinstance(items, str | SpanItem):
        raise ItemError(
            None,
            f"items is a single {type(items).__name__}; pass a list of items, e.g."
            " [SpanItem(text)]",
        )
    if len(items) == 0:
        raise ItemError(0, "no items were given; pass at least one SpanItem")
    for index, item in enumerate(items):
        if not isinstance(item, SpanItem):
            hint = " (wrap the text: SpanItem(text))" if isinstance(item, str) else ""
            raise ItemError(index, f"expected a SpanItem, got {type(item).__name__}{hint}")
    width = items[0].segments
    seen: set[str] = set()
    for index, item in enumerate(items):
        _check_spans(index, "text", item.text, item.spans, seen)
        if item.text_pair is not None:
            _check_spans(index, "text_pair", item.text_pair, item.pair_spans, seen)
        elif item.pair_spans:
            raise ItemError(index, "pair_spans given without text_pair; add text_pair")
        if item.segments != width:
            raise ItemError(
                index,
                f"has {item.segments} pooled segments but item 0 has {width}; all items of"
                " one call need the same number of spans (and all or none with text_pair)",
            )
    return width
