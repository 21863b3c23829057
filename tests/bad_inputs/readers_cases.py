"""Data files the suites read: malformed CoNLL-U, wrong field types, non-UTF-8 bytes, bad CSV."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from suites.edge.jiant import read_jiant
from suites.holmes.blimp import read_blimp
from suites.holmes.release import read_holmes
from suites.readers.conllu import read_conllu
from suites.readers.curriculum_nli import read as read_curriculum
from suites.readers.semeval import read_semeval
from suites.tasks import TaskError
from tests.bad_inputs.case import Case, Env

SENTENCE = [
    "# text = The cat sat.",
    "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_",
    "2\tcat\tcat\tNOUN\tNN\t_\t3\tnsubj\t_\t_",
    "3\tsat\tsit\tVERB\tVBD\t_\t0\troot\t_\tSpaceAfter=No",
    "4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_",
]


def conllu(line: int, column: int, value: str) -> Callable[[Env], object]:
    def run(env: Env) -> object:
        rows = [r.split("\t") for r in SENTENCE]
        rows[line][column] = value
        path = env.tmp() / "train.conllu"
        path.write_text("\n".join("\t".join(r) for r in rows) + "\n\n", encoding="utf-8")
        return read_conllu(path, "deprel")

    return run


def latin1(name: str, text: str, read: Callable[[Path], object]) -> Callable[[Env], object]:
    def run(env: Env) -> object:
        path = env.tmp() / name
        path.write_bytes(text.encode("latin-1"))
        return read(path)

    return run


def jsonl(name: str, record: dict, read: Callable[[Path], object]) -> Callable[[Env], object]:
    def run(env: Env) -> object:
        path = env.tmp() / name
        path.write_text(json.dumps(record) + "\n", encoding="utf-8")
        return read(path)

    return run


def holmes_folder(env: Env, samples: bytes) -> Path:
    folder = env.tmp()
    (folder / "samples.csv").write_bytes(samples)
    (folder / "config-none.yaml").write_text(
        "probe_name: x\nprobe_task_type: SENTENCE\ncontrol_task_type: NONE\nnum_labels: 2\n"
    )
    return folder


CSV_HEADER = "id,inputs,context,label,set-0\n"
BLIMP = {"sentence_good": "Cats sleep.", "sentence_bad": "Cats sleeps.", "UID": "x", "pairID": "0"}
NLI = {"premise": "A cat sleeps.", "hypothesis": "An animal rests.", "gold_label": "entailment"}
CONLLU_UTF8 = "1\tCafé\tcafé\tNOUN\tNN\t_\t0\troot\t_\t_\n\n"

READERS = [
    Case(
        "conllu-head-letter",
        "CoNLL-U HEAD 'x'",
        "TaskError file:line: HEAD is not a word",
        conllu(2, 6, "x"),
        TaskError,
        r"train\.conllu:3: HEAD 'x' is not a word of this "
        r"sentence; HEAD is 0 \(the root\), a word ID 1\.\.4",
    ),
    Case(
        "conllu-head-past-end",
        "CoNLL-U HEAD '99' in a 4-word sentence",
        "TaskError file:line",
        conllu(2, 6, "99"),
        TaskError,
        r"train\.conllu:3: HEAD '99'",
    ),
    Case(
        "conllu-head-negative",
        "CoNLL-U HEAD '-5'",
        "TaskError file:line",
        conllu(4, 6, "-5"),
        TaskError,
        r"train\.conllu:5: HEAD '-5'",
    ),
    Case(
        "conllu-id-range-letter",
        "CoNLL-U ID '2-x'",
        "TaskError file:line: not a word, range or empty node",
        conllu(2, 0, "2-x"),
        TaskError,
        r"train\.conllu:3: ID '2-x' is not a "
        r"word",
    ),
    Case(
        "conllu-id-range-reversed",
        "CoNLL-U ID '3-2'",
        "TaskError file:line: must run from a word to a later word",
        conllu(2, 0, "3-2"),
        TaskError,
        r"train\.conllu:3: ID range "
        r"'3-2'",
    ),
    Case(
        "conllu-id-zero",
        "CoNLL-U ID '0'",
        "TaskError file:line",
        conllu(1, 0, "0"),
        TaskError,
        r"train\.conllu:2: ID '0' is not a word",
    ),
    Case(
        "conllu-latin1",
        "a CoNLL-U file in Latin-1",
        "TaskError file:line: not UTF-8",
        latin1("dev.conllu", CONLLU_UTF8, read_conllu),
        TaskError,
        r"dev\.conllu:1: not UTF-8 text \(byte b'\\xe9' at offset 5\)",
    ),
    Case(
        "blimp-latin1",
        "a BLiMP file in Latin-1",
        "TaskError file:line: not UTF-8",
        latin1(
            "x.jsonl",
            json.dumps({**BLIMP, "sentence_good": "Café."}, ensure_ascii=False),
            read_blimp,
        ),
        TaskError,
        r"x\.jsonl:1: not UTF-8 text",
    ),
    Case(
        "blimp-field-int",
        "BLiMP sentence_good = 5",
        "TaskError file:line: fields are strings",
        jsonl("x.jsonl", {**BLIMP, "sentence_good": 5}, read_blimp),
        TaskError,
        r"x\.jsonl:1: field 'sentence_good' is int 5; .* are strings",
    ),
    Case(
        "blimp-field-list",
        "BLiMP sentence_bad = ['a', 'b']",
        "TaskError file:line",
        jsonl("x.jsonl", {**BLIMP, "sentence_bad": ["a", "b"]}, read_blimp),
        TaskError,
        r"x\.jsonl:1: field 'sentence_bad' is list",
    ),
    Case(
        "curriculum-idx-string",
        "curriculum idx = 'abc'",
        "TaskError file:line: idx is an integer",
        jsonl("train.jsonl", {**NLI, "idx": "abc"}, read_curriculum),
        TaskError,
        r"train\.jsonl:1: idx 'abc' is a str",
    ),
    Case(
        "curriculum-idx-float",
        "curriculum idx = 3.7 (was truncated to 3)",
        "TaskError file:line",
        jsonl("train.jsonl", {**NLI, "idx": 3.7}, read_curriculum),
        TaskError,
        r"train\.jsonl:1: idx 3\.7 is a float",
    ),
    Case(
        "curriculum-latin1",
        "a curriculum file in Latin-1",
        "TaskError file:line: not UTF-8",
        latin1(
            "train.jsonl",
            json.dumps({**NLI, "premise": "Café."}, ensure_ascii=False),
            read_curriculum,
        ),
        TaskError,
        r"train\.jsonl:1: not UTF-8",
    ),
    Case(
        "holmes-extra-field",
        "a Holmes samples.csv row with an extra field",
        "TaskError file:line: fields vs header",
        lambda env: read_holmes(
            holmes_folder(
                env,
                (CSV_HEADER + "0,\"['A b.']\",,x,train\n1,\"['C d.']\",,y,train,extra\n").encode(),
            )
        ),
        TaskError,
        r"samples\.csv:3: 6 fields where the header has 5",
    ),
    Case(
        "holmes-latin1",
        "a Holmes samples.csv in Latin-1",
        "TaskError file:line: not UTF-8",
        lambda env: read_holmes(
            holmes_folder(env, (CSV_HEADER + "0,\"['Café.']\",,x,train\n").encode("latin-1"))
        ),
        TaskError,
        r"samples\.csv:2: not UTF-8",
    ),
    Case(
        "semeval-latin1",
        "a SemEval file in Latin-1",
        "TaskError file:line: not UTF-8",
        latin1("TRAIN.TXT", '1\t"The <e1>café</e1> <e2>owner</e2>."\nOther\n', read_semeval),
        TaskError,
        r"TRAIN\.TXT:1: not UTF-8",
    ),
    Case(
        "jiant-latin1",
        "a jiant file in Latin-1",
        "TaskError file:line: not UTF-8",
        latin1(
            "x.jsonl", json.dumps({"text": "Café", "targets": []}, ensure_ascii=False), read_jiant
        ),
        TaskError,
        r"x\.jsonl:1: not UTF-8",
    ),
]
