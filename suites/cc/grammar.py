"""The comparative-correlative grammar (spec §1) as independent components with probabilities.

A sentence is `[START] The CORE [ADD] [INSERT] PUNCT the CORE [ADD] .`; the positive CORE is
`ADV_I the NUM NOUN VERB`, the negative one `ADV_I NUM VERB the NOUN`. Each rule picks among its
alternatives uniformly (a uniform PCFG), so the grammar factorises into six independent choices,
the `COMPONENTS`; a *shape* is one option per component. The shape fixes every word position,
and the lexical draw (`Draw`) fills the slots; a positive and a negative rendered from one draw
are a minimal pair with the same words in a different order.

Word positions (the syntax features) count whitespace-separated words, 0-based; the punctuation
tokens `,` `;` `.` are not words ("twenty-one" and "well-known" are one word each):
  length        words in the sentence
  cc_start      position of the `The`/`the` opening the first half of the CC (= words of START)
  second_start  position of the `the` opening the second half
  distance      words strictly between the halves: after the first half's core (its VERB in a
                positive, its NOUN in a negative) and before the second half's `the`, i.e. the
                first half's ADD plus the INSERT (0 when neither is there)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from suites.cc.vocabulary import GRAMMAR_SLOTS, SyntaxVocabulary
from suites.errors import TaskError

FEATURES = ("length", "cc_start", "second_start", "distance")
PUNCTUATION = (",", ";", "")  # spec §1: PUNCT -> ',' | ';' | ''
PUNCT_TOKENS = frozenset({",", ";", "."})
FIXED_SLOTS = {  # closed-class slots shared by both splits (spec §1)
    "SAY": ("say", "think", "mean", "believe"),
    "TEMP1": ("before", "after", "during"),
}
START_PHRASES = tuple(
    tuple(text.split())
    for text in (
        "Nowadays ,",
        "Nowadays",
        "Therefore ,",
        "Therefore",
        "We can CANWORD that",
        "It is KNOWNWORD that",
        "It follows that",
        "Sometimes",
        "Sometimes ,",
        "It was recently announced that",
        "People have told me that",
        "I recently read in a really interesting book that",
        "I have recently read in an established , well-known newspaper that",
        "It was reported in a special segment on TV today that",
    )
)
INSERT1 = ("without stopping", "without a break", "without a pause", "uninterrupted")
ADDITIONS = (
    ", and by the way ,",
    ", and I want to add that",
    ", and PRON just want to say that",
    ", and then PRON said that",
)
BETWEEN = "PRON SAY that"
SENTS = (
    "this also holds in other cases",
    "this is not always true",
    "this is always true",
    "this has only recently been the case",
    "this has not always been the case",
    "this has always been the case",
)
# ADD -> TEMP | UNDER | TEMP UNDER | UNDER TEMP; TEMP -> TEMP1 TEMP2; UNDER -> 'under the' UNDER2
ADD_FORMS = (
    "TEMP1 TEMP2",
    "under the UNDER2",
    "TEMP1 TEMP2 under the UNDER2",
    "under the UNDER2 TEMP1 TEMP2",
)


@dataclass(frozen=True)
class Option:
    """One alternative of a component: tokens (words, punctuation, slot names), probability."""

    tokens: tuple[str, ...]
    probability: float


def _options(texts: tuple[str, ...], total: float) -> tuple[Option, ...]:
    return tuple(Option(tuple(t.split()), total / len(texts)) for t in texts)


def _optional(texts: tuple[str, ...]) -> tuple[Option, ...]:
    """Absent with probability 1/2 (the rule's alternative without it), else uniform."""
    return (Option((), 0.5), *_options(texts, 0.5))


def _insert_options() -> tuple[Option, ...]:
    # SPOS/SNEG: without INSERT (1/2) | with (1/2); INSERT -> INSERT1 | INSERT2 (1/2 each);
    # INSERT2 -> ADDITION BETWEEN SENT with 4 x 6 equiprobable (ADDITION, SENT) choices.
    insert2 = tuple(f"{a} {BETWEEN} {s}" for a in ADDITIONS for s in SENTS)
    return (Option((), 0.5), *_options(INSERT1, 0.25), *_options(insert2, 0.25))


ADVERB_OPTIONS = _options(("ADV", "ADV and ADV"), 1.0)  # ADV_I -> ADV | ADV 'and' ADV
COMPONENTS: dict[str, tuple[Option, ...]] = {
    "start": _optional(tuple(" ".join(p) for p in START_PHRASES)),  # POS1: [START] ... (1/2)
    "add1": _optional(ADD_FORMS),  # POS1: ... [ADD] (1/2)
    "adverbs1": ADVERB_OPTIONS,
    "insert": _insert_options(),
    "adverbs2": ADVERB_OPTIONS,
    "add2": _optional(ADD_FORMS),  # POS2 -> POS_LOWER | POS_LOWER ADD
}
Shape = tuple[int, int, int, int, int, int]  # option index per component, in COMPONENTS order


@dataclass(frozen=True)
class CoreWords:
    """The words of one half's core; positive and negative order them differently."""

    adverbs: tuple[str, ...]  # ADV_I: ("harder",) or ("harder", "and", "faster")
    num: str
    noun: str
    verb: str

    def tokens(self, positive: bool) -> tuple[str, ...]:
        """`ADV_I the NUM NOUN VERB` (positive) or `ADV_I NUM VERB the NOUN` (negative)."""
        if positive:
            return (*self.adverbs, "the", self.num, self.noun, self.verb)
        return (*self.adverbs, self.num, self.verb, "the", self.noun)


@dataclass(frozen=True)
class Draw:
    """A shape with every slot filled: one minimal pair (positive and negative rendering)."""

    shape: Shape
    start: tuple[str, ...]
    core1: CoreWords
    add1: tuple[str, ...]
    insert: tuple[str, ...]
    punct: str
    core2: CoreWords
    add2: tuple[str, ...]


@dataclass(frozen=True)
class Sentence:
    """A rendered sentence with its label and word-position features."""

    text: str
    label: int  # 1 = CC instance (positive), 0 = reordered negative
    length: int
    cc_start: int
    second_start: int
    distance: int


def _fill(
    tokens: tuple[str, ...], vocabulary: SyntaxVocabulary, rng: np.random.Generator
) -> tuple[str, ...]:
    out = []
    for token in tokens:
        if token in GRAMMAR_SLOTS:
            words = vocabulary.words(token)
            out.append(words[int(rng.integers(len(words)))])
        elif token in FIXED_SLOTS:
            out.append(FIXED_SLOTS[token][int(rng.integers(len(FIXED_SLOTS[token])))])
        else:
            out.append(token)
    return tuple(out)


def _core(adverb_option: int, vocabulary: SyntaxVocabulary, rng: np.random.Generator) -> CoreWords:
    adverbs = _fill(ADVERB_OPTIONS[adverb_option].tokens, vocabulary, rng)
    num, noun, verb = _fill(("NUM", "NOUN", "VERB"), vocabulary, rng)
    return CoreWords(adverbs, num, noun, verb)


def draw(shape: Shape, vocabulary: SyntaxVocabulary, rng: np.random.Generator) -> Draw:
    """Fill every slot of `shape` with words of `vocabulary` (uniformly), and draw PUNCT."""
    options = [COMPONENTS[name][index] for name, index in zip(COMPONENTS, shape)]
    start = _fill(options[0].tokens, vocabulary, rng)
    core1 = _core(shape[2], vocabulary, rng)
    add1 = _fill(options[1].tokens, vocabulary, rng)
    insert = _fill(options[3].tokens, vocabulary, rng)
    punct = PUNCTUATION[int(rng.integers(len(PUNCTUATION)))]
    core2 = _core(shape[4], vocabulary, rng)
    add2 = _fill(options[5].tokens, vocabulary, rng)
    return Draw(shape, start, core1, add1, insert, punct, core2, add2)


def _words(tokens: tuple[str, ...]) -> int:
    return sum(1 for token in " ".join(tokens).split() if token not in PUNCT_TOKENS)


def render(filled: Draw, positive: bool) -> Sentence:
    """The positive (CC) or negative sentence of a draw, with its features."""
    opening = ("the",) if filled.start else ("The",)
    first = (*opening, *filled.core1.tokens(positive))
    between = (*filled.add1, *filled.insert)
    second = ("the", *filled.core2.tokens(positive), *filled.add2)
    tokens = (*filled.start, *first, *between, filled.punct, *second, ".")
    text = " ".join(t for t in tokens if t)
    for mark in PUNCT_TOKENS:
        text = text.replace(f" {mark}", mark)
    cc_start = _words(filled.start)
    second_start = cc_start + _words(first) + _words(between)
    return Sentence(
        text=text,
        label=int(positive),
        length=_words(tokens),
        cc_start=cc_start,
        second_start=second_start,
        distance=_words(between),
    )


@dataclass(frozen=True)
class ShapeTable:
    """Every shape of the grammar (flattened) with its probability and feature values."""

    dims: tuple[int, ...]
    probability: np.ndarray  # float64 [shape]
    features: dict[str, np.ndarray]  # int64 [shape] per feature

    def values(self, feature: str) -> list[int]:
        """The values `feature` can take (shapes with positive probability)."""
        return sorted(int(v) for v in np.unique(self.features[feature][self.probability > 0]))

    def sample(
        self, rng: np.random.Generator, n: int, feature: str | None = None, value: int | None = None
    ) -> list[Shape]:
        """`n` shapes from the grammar's distribution, given `feature == value` if set."""
        weights = self.probability
        if feature is not None:
            weights = np.where(self.features[feature] == value, weights, 0.0)
            if weights.sum() <= 0:
                raise TaskError(
                    f"no sentence of the grammar has {feature} = {value}; "
                    f"possible values: {self.values(feature)}"
                )
        flat = rng.choice(weights.size, size=n, p=weights / weights.sum())
        return [tuple(int(i) for i in np.unravel_index(k, self.dims)) for k in flat]  # type: ignore[misc]


def shape_table(vocabulary: SyntaxVocabulary) -> ShapeTable:
    """All shapes of the grammar with the vocabulary's word counts (cached by those counts)."""
    counts = tuple((slot, vocabulary.word_count(slot)) for slot in GRAMMAR_SLOTS)
    return _shape_table(counts)


@lru_cache(maxsize=8)
def _shape_table(counts: tuple[tuple[str, int], ...]) -> ShapeTable:
    per_slot = dict(counts)

    def words(tokens: tuple[str, ...]) -> int:
        return sum(per_slot.get(t, 1) for t in tokens if t not in PUNCT_TOKENS)

    axes = [np.array([words(o.tokens) for o in COMPONENTS[name]]) for name in COMPONENTS]
    probs = [np.array([o.probability for o in COMPONENTS[name]]) for name in COMPONENTS]
    dims = tuple(len(a) for a in axes)
    grid = np.ix_(*[np.arange(d) for d in dims])
    start, add1, adv1, insert, adv2, add2 = (a[g] for a, g in zip(axes, grid))
    core_rest = per_slot["NUM"] + per_slot["NOUN"] + per_slot["VERB"] + 2  # 'The' ... 'the'
    cc_start = start
    distance = add1 + insert
    second_start = cc_start + core_rest + adv1 + distance
    length = second_start + core_rest + adv2 + add2
    probability = np.ones(dims)
    for p, g in zip(probs, grid):
        probability = probability * p[g]
    shape_features = {
        "length": length,
        "cc_start": cc_start,
        "second_start": second_start,
        "distance": distance,
    }
    return ShapeTable(
        dims=dims,
        probability=probability.ravel(),
        features={
            k: np.broadcast_to(v, dims).ravel().astype(np.int64) for k, v in shape_features.items()
        },
    )
