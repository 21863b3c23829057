"""Fuzzed inputs for the data readers: each either raises a `LingprobeError` or returns what the
input says (the item texts and labels equal the input's). Strategies mix arbitrary unicode,
quotes, control characters, very long strings, odd column counts and unusual labels; the number
of examples is bounded so the suite stays fast."""

from __future__ import annotations

import csv
import io
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest.mock import patch

from datasets import ClassLabel, Dataset, DatasetDict, Features, Value
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lingprobe.errors import LingprobeError
from suites.holmes.blimp import read_blimp
from suites.holmes.release import read_holmes
from suites.readers.conllu import read_sentences
from suites.tasks import Task

FUZZ = settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
AWKWARD = "\"',;\t\n\r\\<>#=_-|\u200b\u00a0\u2028\x00\x07\x1b"
TEXT = st.one_of(
    st.text(max_size=30),
    st.text(alphabet=AWKWARD + "ab ", max_size=12),
    st.builds(lambda c, n: c * n, st.characters(codec="utf-8"), st.integers(500, 3_000)),
)
WORD = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\n"), min_size=1, max_size=8),
    st.text(alphabet=AWKWARD + "ab", min_size=1, max_size=4),
)


def outcome(read: Callable[[], Any]) -> Any | None:
    """The reader's result, or None when it refused the input with a LingprobeError."""
    try:
        return read()
    except LingprobeError as error:
        assert "\n" not in str(error), f"a message of several lines: {error}"
        return None


def written(name: str, data: str | bytes) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="lingprobe-fuzz-"))
    path = folder / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


# CoNLL-U ------------------------------------------------------------------------------------


@st.composite
def conllu_sentences(draw: st.DrawFn) -> list[list[tuple[str, str, str]]]:
    """Sentences of (form, UPOS, HEAD) triples; sometimes a HEAD that is not a word."""
    sentences = []
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 5))
        heads = st.one_of(st.integers(0, n).map(str), st.sampled_from(["_", "-1", "x", str(n + 1)]))
        sentences.append([(draw(WORD), draw(WORD), draw(heads)) for _ in range(n)])
    return sentences


@FUZZ
@given(conllu_sentences(), st.booleans())
def test_conllu_reads_the_words_it_is_given_or_refuses(sentences: list, with_text: bool) -> None:
    blocks = []
    for words in sentences:
        lines = [f"# text = {' '.join(f for f, _, _ in words)}"] if with_text else []
        lines += [
            f"{i}\t{form}\t_\t{upos}\t_\t_\t{head}\tdep\t_\t_"
            for i, (form, upos, head) in enumerate(words, start=1)
        ]
        blocks.append("\n".join(lines))
    path = written("train.conllu", "\n\n".join(blocks) + "\n\n")
    read = outcome(lambda: list(read_sentences(path)))
    if read is None:
        return
    assert [[w.form for w in s.words] for s in read] == [[f for f, _, _ in s] for s in sentences]
    assert [[w.upos for w in s.words] for s in read] == [[u for _, u, _ in s] for s in sentences]
    for sentence in read:
        for word in sentence.words:
            assert sentence.text[word.start : word.end] == word.form


@FUZZ
@given(st.text(max_size=300))
def test_conllu_garbage_is_refused_or_read(text: str) -> None:
    path = written("dev.conllu", text)
    outcome(lambda: list(read_sentences(path)))


# JSON lines (BLiMP) -------------------------------------------------------------------------


@FUZZ
@given(st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=4))
def test_blimp_reads_the_sentences_it_is_given_or_refuses(pairs: list[tuple[str, str]]) -> None:
    lines = [
        json.dumps({"sentence_good": good, "sentence_bad": bad, "UID": "x", "pairID": str(i)})
        for i, (good, bad) in enumerate(pairs)
    ]
    task = outcome(lambda: read_blimp(written("x.jsonl", "\n".join(lines) + "\n")))
    if task is None:
        return
    want = [s.strip() for pair in pairs for s in pair]
    assert task.frame["text"].to_list() == want
    assert task.frame["label"].to_list() == ["good", "bad"] * len(pairs)


@FUZZ
@given(st.binary(max_size=300))
def test_blimp_bytes_are_refused_or_read(data: bytes) -> None:
    outcome(lambda: read_blimp(written("x.jsonl", data)))


# The Holmes release CSV ---------------------------------------------------------------------

CONFIG = "probe_name: fuzz\nprobe_task_type: SENTENCE\ncontrol_task_type: NONE\nnum_labels: 9\n"


def read_holmes_here(folder: Path) -> Any:
    """`read_holmes` without the inventory look-up (a download; not what is tested here)."""
    with patch("suites.holmes.release.lookup", return_value=None):
        return read_holmes(folder)


def holmes_folder(samples: str | bytes) -> Path:
    folder = written("samples.csv", samples).parent
    (folder / "config-none.yaml").write_text(CONFIG, encoding="utf-8")
    return folder


@FUZZ
@given(st.lists(st.tuples(TEXT, WORD), min_size=1, max_size=5))
def test_holmes_csv_reads_the_rows_it_is_given_or_refuses(rows: list[tuple[str, str]]) -> None:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "inputs", "context", "label", "set-0"])
    for i, (sentence, label) in enumerate(rows):
        writer.writerow([i, repr([sentence]), "", label, "train"])
    task = outcome(lambda: read_holmes_here(holmes_folder(out.getvalue())))
    if task is None:
        return
    assert task.frame["text"].to_list() == [s for s, _ in rows]
    assert task.frame["label"].to_list() == [label.strip() for _, label in rows]  # trimmed


@FUZZ
@given(st.lists(st.lists(TEXT, max_size=7), min_size=1, max_size=4))
def test_holmes_csv_with_odd_columns_is_refused_or_read(records: list[list[str]]) -> None:
    lines = ["id,inputs,context,label,set-0", *(",".join(r) for r in records)]
    outcome(lambda: read_holmes_here(holmes_folder("\n".join(lines) + "\n")))


# Task.from_hf columns -----------------------------------------------------------------------


@st.composite
def hf_splits(draw: st.DrawFn) -> dict[str, list[tuple[str, Any]]]:
    """{split: [(text, label), ...]}, each split's labels of one Arrow type (or None)."""
    splits = {}
    for name in draw(st.sampled_from([["train"], ["train", "test"], ["train", "validation"]])):
        kind = draw(st.sampled_from(["int", "str", "float"]))
        value = {
            "int": st.one_of(st.none(), st.integers(-3, 5), st.just(49_999)),
            "str": st.one_of(st.none(), st.text(max_size=6)),
            "float": st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False)),
        }[kind]
        splits[name] = draw(st.lists(st.tuples(TEXT, value), min_size=1, max_size=5))
    return splits


def expected(value: Any, kind: str) -> Any:
    """The label `value` should get, or None for an item left out as unlabelled."""
    if value is None or (kind == "classification" and value == -1 and isinstance(value, int)):
        return None
    return float(value) if kind == "regression" else str(value)


@FUZZ
@given(hf_splits())
def test_from_hf_reads_the_labels_it_is_given_or_refuses(splits: dict) -> None:
    data = DatasetDict(
        {
            name: Dataset.from_dict({"text": [t for t, _ in rows], "label": [v for _, v in rows]})
            for name, rows in splits.items()
        }
    )
    task = outcome(lambda: Task.from_hf(data))
    if task is None:
        return
    ours = {"train": "train", "validation": "dev", "test": "test"}
    kept = [
        (text, expected(value, task.target_type), ours[name])
        for name, rows in splits.items()
        for text, value in rows
        if expected(value, task.target_type) is not None
    ]
    got = list(zip(task.frame["text"], task.frame["label"], task.frame["split"], strict=True))
    assert got == kept


@FUZZ
@given(st.lists(st.tuples(TEXT, st.sampled_from([-1, 0, 1, 2])), min_size=1, max_size=6))
def test_from_hf_class_labels_map_to_their_names_or_refuse(rows: list[tuple[str, int]]) -> None:
    features = Features({"text": Value("string"), "label": ClassLabel(names=["a", "b", "c"])})
    table = Dataset.from_dict(
        {"text": [t for t, _ in rows], "label": [v for _, v in rows]}, features
    )
    task = outcome(lambda: Task.from_hf(table))
    if task is None:
        assert all(v == -1 for _, v in rows)  # only an unlabelled train split is refused
        return
    kept = [(t, "abc"[v]) for t, v in rows if v != -1]
    assert list(zip(task.frame["text"], task.frame["label"], strict=True)) == kept
    assert task.labels == ("a", "b", "c")
