"""Universal Decompositional Semantics (UDS 2.0) annotations as Holmes tasks.

Holmes names: `protoroles-<property>` (a predicate and one of its arguments, is the proto-role
property true of the argument: 14 SPR2 properties), `arg-is-abstract|kind|particular` (an
argument) and `pred-is-dynamic|hypothetical|particular` (a predicate) for genericity.

The annotations (decomp's normalized sentence annotations) address sentence `n` of UD English EWT
v1.2's dev or test file as graph `ewt-dev-n` and its word `i` as node `...-semantics-pred-i` or
`...-arg-i`; lingprobe reads those two v1.2 files, pinned, so every node lands on the word it was
annotated on (its span is that head word). The train portion (EWT v1.2 train) is not in the
registry: its file is over the pinned snapshot's size limit. So the dev annotations train the
probe (dev carved from them, Holmes §4.3) and the test annotations test it.

Labels: a normalized value above 0 is `true`, below 0 `false`; exactly 0 (no evidence either way
after normalization) is left out. Holmes does not document how it binarizes UDS scores; this is
the sign rule of the decomp normalization.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from suites.datasets import DataSource
from suites.holmes.inventory import shipped_tags
from suites.readers.conllu import Sentence, read_sentences
from suites.readers.text_files import read_utf8
from suites.tasks import Task, TaskError, make_frame

DATASET = "uds"
PROTOROLES = (
    "awareness",
    "change_of_location",
    "change_of_possession",
    "change_of_state",
    "change_of_state_continuous",
    "existed_after",
    "existed_before",
    "existed_during",
    "instigation",
    "partitive",
    "sentient",
    "volition",
    "was_for_benefit",
    "was_used",
)
GENERICITY = (
    "arg-abstract",
    "arg-kind",
    "arg-particular",
    "pred-dynamic",
    "pred-hypothetical",
    "pred-particular",
)
NODE = re.compile(r"ewt-(dev|test)-([0-9]+)-semantics-(?:pred|arg|predhead)-([0-9]+)")


def task_names() -> list[str]:
    """The Holmes names of the UDS tasks lingprobe builds."""
    names = [f"protoroles-{p}" for p in PROTOROLES]
    return names + [g.replace("-", "-is-", 1) for g in GENERICITY]


def _annotation(name: str) -> tuple[str, str]:
    """(annotation file key, property) of a task name."""
    if name.startswith("protoroles-") and name.removeprefix("protoroles-") in PROTOROLES:
        return "protoroles", name.removeprefix("protoroles-")
    prop = name.replace("-is-", "-", 1)
    if prop in GENERICITY:
        return "genericity", prop
    raise TaskError(f"{name!r} is not a UDS task; known: {', '.join(task_names())}")


@cache
def _sentences(path: Path) -> list[Sentence]:
    return list(read_sentences(path))


def _words(node: str, banks: dict[str, list[Sentence]]) -> tuple[Sentence, tuple[int, int]]:
    """The sentence and word span a node id addresses (checked against the sentence)."""
    match = NODE.fullmatch(node)
    if match is None:
        raise TaskError(f"UDS node {node!r} is not `ewt-<dev|test>-<n>-semantics-<pred|arg>-<i>`")
    split, number, index = match.group(1), int(match.group(2)), int(match.group(3))
    bank = banks[split]
    if not 0 < number <= len(bank) or not 0 < index <= len(bank[number - 1].words):
        raise TaskError(
            f"UDS node {node!r} addresses a word EWT v1.2 {split} does not have; the"
            " annotation and treebank files do not belong together: `lingprobe data verify`"
        )
    sentence = bank[number - 1]
    word = sentence.words[index - 1]
    return sentence, (word.start, word.end)


def read_uds(name: str, source: DataSource) -> Task:
    """The UDS task `name` (see the module doc) from the registry's `uds` files."""
    key, prop = _annotation(name)
    banks = {s: _sentences(source.path(DATASET, f"ewt-{s}")) for s in ("dev", "test")}
    graphs = json.loads(read_utf8(source.path(DATASET, key)))["data"]
    rows = []
    for graph, nodes in graphs.items():
        split = graph.split("-")[1]
        if split not in banks:
            continue  # EWT v1.2 train annotations: their treebank file is not registered
        for node, values in nodes.items():
            value = values[key].get(prop, {}).get("value")
            if value is None or value == 0:
                continue
            parts = node.split("%%")
            located = [_words(part, banks) for part in parts]
            rows.append(
                {
                    "text": located[0][0].text,
                    "spans": [span for _, span in located],
                    "label": "true" if value > 0 else "false",
                    "split": "train" if split == "dev" else "test",
                }
            )
    kind, phenomenon, probe_type = shipped_tags(name)
    return Task(
        name,
        make_frame(rows, "classification"),
        "classification",
        labels=("false", "true"),
        phenomenon=phenomenon,
        phenomenon_type=kind,
        metadata={"source": DATASET, "property": prop, "probe_type": probe_type},
    )
