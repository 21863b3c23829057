"""Long documents: sliding windows against truncation (MiniLM, EWT sentences joined into documents).

Truncation reads one window per document and loses the rest; windows with the default stride (half
a window) read every token about twice, so their cost is the price of giving every word at least a
quarter window of context on each side. `window_stride` = a full window reads every token once
(no overlap: the words at window edges get little context), the cost of splitting a document
into chunks by hand.
"""

from __future__ import annotations

import warnings

import pytest

from benchmarks.ewt_sample import documents
from benchmarks.extract_common import load, median_of
from benchmarks.figures import Figures
from internals import SpanItem, load_subject, sites
from internals.packaged import MINILM
from internals.reading import Reading

N_DOCUMENTS, WORDS_EACH = 8, 2000


@pytest.fixture(scope="module")
def minilm():
    return load_subject(MINILM)


@pytest.fixture(scope="module")
def docs():
    return documents(N_DOCUMENTS, WORDS_EACH)


def rows_read(subject, items, reading: Reading) -> int:
    plan, _ = subject.plan(items, reading)
    return sum(len(row.input_ids) for row in plan.rows)


@pytest.mark.quick
@pytest.mark.needs_data
def test_window_overhead_against_truncation(figures: Figures, minilm, docs):
    every = sites.every_layer(minilm)
    width = minilm.max_length - 2  # [CLS] ... [SEP]
    whole = [SpanItem(d.text) for d in docs]
    words = [SpanItem(d.text, spans=((w.start, w.end),)) for d in docs for w in d.words]
    settings = {
        "truncate": Reading(long_texts="truncate"),
        "window, stride = window": Reading(window_stride=width),
        "window, stride = 1/2 window (default)": Reading(),
    }

    def extract(items, reading: Reading):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # truncation warns, by design
            return minilm.features(
                items,
                every,
                long_texts=reading.long_texts,
                window_stride=reading.window_stride,
                progress=False,
            )

    n_tokens = sum(len(minilm.tokenizer(d.text)["input_ids"]) for d in docs)
    print(
        f"\n[long texts] MiniLM, {N_DOCUMENTS} EWT documents of ~{WORDS_EACH} words,"
        f" {n_tokens} tokens in all, window {minilm.max_length} ({load()})"
    )
    base = None
    whole_times = {}
    for label, reading in settings.items():
        seconds = median_of(lambda reading=reading: extract(whole, reading), rounds=1)
        base = base or seconds
        whole_times[label] = seconds
        read = rows_read(minilm, whole, reading)
        print(
            f"  whole-document mean, {label:<38} {seconds:7.2f} s  {seconds / base:5.2f}x"
            f" truncation   tokens run / in text {read / n_tokens:.2f}"
        )
    for label in list(settings)[1:]:
        reading = settings[label]
        seconds = median_of(lambda reading=reading: extract(words, reading), rounds=1)
        print(
            f"  every word ({len(words)} items), {label:<32} {seconds:7.2f} s"
            f"   tokens run / in text {rows_read(minilm, words, reading) / n_tokens:.2f}"
        )
    default = whole_times["window, stride = 1/2 window (default)"]
    figures.record(
        ratio=default / whole_times["truncate"],
        against="truncation to one window (which loses the rest of each document)",
        times=whole_times,
    )
