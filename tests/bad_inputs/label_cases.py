"""Labels and the files that carry them: Hugging Face "no label" values, sparse class ids, CSV
quoting, CoNLL-U ids, trees that are not trees, Holmes configs, invisible texts."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import torch

from internals import ItemError, SpanItem
from probes import ProbeInputError, classification_metrics
from suites.cc.corpus import read_labelled_sentences
from suites.cc.errors import CorpusError
from suites.holmes.release import read_holmes
from suites.readers.conllu import read_conllu
from suites.structural.data import read_treebank
from suites.tasks import Task, TaskError
from tests.bad_inputs.case import Case, Env
from tests.bad_inputs.internals_cases import bert_features
from tests.bad_inputs.probes_cases import fit
from tests.bad_inputs.readers_cases import CSV_HEADER, SENTENCE, holmes_folder

CONFIG = "probe_name: x\nprobe_task_type: SENTENCE\ncontrol_task_type: NONE\nnum_labels: 2\n"
ALIAS_BOMB = (
    'a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]\n'
    + "".join(
        f"{name}: &{name} [{', '.join([f'*{below}'] * 9)}]\n"
        for below, name in zip("abcdefgh", "bcdefghi")
    )
    + "probe_name: [*i, *i, *i, *i, *i, *i, *i, *i, *i]\n"
    + CONFIG.split("\n", 1)[1]
)


@contextmanager
def hf_log() -> Iterator[list[str]]:
    """The messages `suites.hf_labels` logs meanwhile."""
    messages: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage())

    logger, handler = logging.getLogger("suites.hf_labels"), Collect(logging.INFO)
    logger.addHandler(handler)
    try:
        yield messages
    finally:
        logger.removeHandler(handler)


def glue(test_labels: list) -> object:
    """A GLUE-style DatasetDict: ClassLabel labels, `test_labels` in the test split."""
    from datasets import ClassLabel, Dataset, DatasetDict, Features, Value

    features = Features({"text": Value("string"), "label": ClassLabel(names=["neg", "pos"])})
    train = Dataset.from_dict({"text": ["a b", "c d", "e f"], "label": [0, 1, 1]}, features)
    texts = [f"t{i}" for i in range(len(test_labels))]
    test = Dataset.from_dict({"text": texts, "label": test_labels}, features)
    return DatasetDict(train=train, test=test)


def unlabelled_test_split(env: Env) -> None:
    with hf_log() as log:
        task = Task.from_hf(glue([-1, 0, -1]))
    test = task.frame.filter(split="test")
    assert test["text"].to_list() == ["t1"] and test["label"].to_list() == ["neg"], test
    assert any("2 items have no label" in m for m in log), log


def none_labels(env: Env) -> None:
    from datasets import Dataset

    with hf_log() as log:
        task = Task.from_hf(Dataset.from_dict({"text": ["a", "b", "c"], "label": ["p", None, "q"]}))
    assert task.labels == ("p", "q") and task.frame["text"].to_list() == ["a", "c"]
    assert any("1 items have no label" in m for m in log), log


def unlabelled_train(env: Env) -> object:
    from datasets import Dataset

    return Task.from_hf(Dataset.from_dict({"text": ["a", "b"], "label": [None, None]}))


def mixed_labels(env: Env) -> object:
    from datasets import Dataset, DatasetDict

    return Task.from_hf(
        DatasetDict(
            train=Dataset.from_dict({"text": ["a", "b"], "label": [0, 1]}),
            test=Dataset.from_dict({"text": ["c"], "label": ["pos"]}),
        )
    )


def outlier_label_task(env: Env) -> None:
    from datasets import Dataset

    labels = [0, 1, 2, 49_999, 1, 0]
    task = Task.from_hf(Dataset.from_dict({"text": [f"w{i}" for i in labels], "label": labels}))
    assert task.num_classes == 4, task.labels
    assert [task.labels[i] for i in task.targets.tolist()] == [str(v) for v in labels]


def outlier_metrics(env: Env) -> None:
    from sklearn.metrics import f1_score, matthews_corrcoef

    gen = torch.Generator().manual_seed(0)
    true = torch.randint(0, 4, (2, 50), generator=gen)
    true[:, 3] = 49_999
    pred = torch.where(torch.rand(true.shape, generator=gen) < 0.7, true, (true + 1) % 4)
    got = classification_metrics(pred, true, 50_000)  # was a 2 x 50,000 x 50,000 table (40 GB)
    for probe in range(2):
        t, p = true[probe].numpy(), pred[probe].numpy()
        assert abs(float(got["macro_f1"][probe]) - f1_score(t, p, average="macro")) < 1e-12
        assert abs(float(got["mcc"][probe]) - matthews_corrcoef(t, p)) < 1e-12


def sparse_targets(env: Env) -> object:
    labels = torch.arange(120) % 3
    labels[7] = 49_999
    return fit(targets=labels)


def csv_file(name: str, text: str, read: Callable) -> Callable[[Env], object]:
    def run(env: Env) -> object:
        path = env.tmp() / name
        path.write_text(text, encoding="utf-8")
        return read(path)

    return run


def holmes_csv(env: Env) -> object:
    rows = "0,\"['A b.'],,x,train\n1,\"['C d.']\",,y,train\n"  # line 2's quote closes on 3
    return read_holmes(holmes_folder(env, (CSV_HEADER + rows).encode()))


def holmes_config(text: str) -> Callable[[Env], object]:
    def run(env: Env) -> object:
        folder = holmes_folder(env, (CSV_HEADER + "0,\"['A b.']\",,x,train\n").encode())
        (folder / "config-none.yaml").write_text(text, encoding="utf-8")
        return read_holmes(folder)

    return run


def treebank(heads: list[str]) -> Callable[[Env], object]:
    """A two-sentence treebank whose second sentence (line 7) has `heads`."""

    def run(env: Env) -> object:
        rows = [r.split("\t") for r in SENTENCE[1:]]
        second = [[*r[:6], h, *r[7:]] for r, h in zip(rows, heads)]
        lines = [*SENTENCE, "", *SENTENCE[:1], *("\t".join(r) for r in second), ""]
        path = env.tmp() / "dev.conllu"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return read_treebank(path)

    return run


def duplicate_id(env: Env) -> object:
    rows = [*SENTENCE[:3], SENTENCE[2], *SENTENCE[3:]]
    path = env.tmp() / "train.conllu"
    path.write_text("\n".join(rows) + "\n\n", encoding="utf-8")
    return read_conllu(path, "deprel")


def dense_fix_runs(env: Env) -> None:
    labels = (torch.arange(120) % 3).numpy()
    labels[7] = 49_999
    _, ids = np.unique(labels, return_inverse=True)
    assert fit(targets=torch.as_tensor(ids)).table().height > 0


LABELS = [
    Case(
        "hf-label-minus-one",
        "Task.from_hf: a GLUE test split whose ClassLabel labels are -1",
        "items left out of training and evaluation; log '2 items have no label' (was the last"
        " class name)",
        unlabelled_test_split,
        None,
        "",
    ),
    Case(
        "hf-label-none",
        "Task.from_hf: a label None",
        "item left out; log '1 items have no label' (was a class 'None')",
        none_labels,
        None,
        "",
    ),
    Case(
        "hf-train-unlabelled",
        "Task.from_hf: every train label None or -1",
        "TaskError: all 2 train items have no label",
        unlabelled_train,
        TaskError,
        r"all 2 train items have no label \(-1 or None",
    ),
    Case(
        "hf-label-mixed-types",
        "Task.from_hf: train labels 0, 1 and test label 'pos'",
        "TaskError: mixes integers and strings (was classes '0', '1', 'pos')",
        mixed_labels,
        TaskError,
        r"column 'label' mixes integers and strings: split 'train' row 0 is 0, split 'test'"
        r" row 0 is 'pos'",
    ),
    Case(
        "hf-label-outlier-id",
        "Task.from_hf: integer labels 0, 1, 2 and 49,999",
        "4 classes with dense ids, each item its own label's id",
        outlier_label_task,
        None,
        "",
    ),
    Case(
        "targets-sparse-ids",
        "fit_probes: class ids 0..2 and one 49,999",
        "ProbeInputError: ids are sparse; map with np.unique or pass num_classes (was a 40 GB"
        " allocation)",
        sparse_targets,
        ProbeInputError,
        r"class ids are sparse: 4 distinct ids up to 49999 would make a 50000-class probe"
        r" .*np\.unique\(targets, return_inverse=True\)",
    ),
    Case(
        "targets-sparse-ids-fixed",
        "fit_probes: the same ids mapped with np.unique(..., return_inverse=True)",
        "trains a 4-class probe",
        dense_fix_runs,
        None,
        "",
    ),
    Case(
        "metrics-outlier-class",
        "classification_metrics with num_classes=50,000 (ids 0..3 and 49,999)",
        "[probe, class] counts, no K x K table; equal to sklearn's",
        outlier_metrics,
        None,
        "",
    ),
    Case(
        "csv-unclosed-quote-hf",
        'Task.from_hf on a CSV whose line 2 opens a quote: `"A b.,x`',
        "TaskError file:line: the quote is never closed",
        csv_file("q.csv", 'text,label\n"A b.,x\nC d.,y\n', Task.from_hf),
        TaskError,
        r"q\.csv:2: a quote opened in the record starting on this line is never closed",
    ),
    Case(
        "csv-unclosed-quote-holmes",
        "a Holmes samples.csv whose line 2 opens a quote closed on line 3",
        "TaskError file:line: the quoted field runs on to line 3",
        holmes_csv,
        TaskError,
        r"samples\.csv:2: a quoted field opened in the record starting on this line runs on to"
        r" line 3",
    ),
    Case(
        "csv-unclosed-quote-corpus",
        "a cc labelled-sentence CSV with an unclosed quote",
        "CorpusError file:line",
        csv_file("c.csv", 'sentence,label\n"A b.,1\n', read_labelled_sentences),
        CorpusError,
        r"c\.csv:2: a quote opened .* is never closed",
    ),
    Case(
        "conllu-duplicate-id",
        "CoNLL-U word ID 2 on two lines",
        "TaskError file:line: duplicate word ID (was 'token not found in the sentence text')",
        duplicate_id,
        TaskError,
        r"train\.conllu:4: duplicate word ID 2 \(also on line 3\)",
    ),
    Case(
        "tree-two-roots",
        "a treebank's second sentence with two HEAD 0",
        "TaskError file:line: 2 roots (was 'sentence 1')",
        treebank(["2", "0", "0", "3"]),
        TaskError,
        r"dev\.conllu:8: the sentence starting on this line is not a dependency tree: it has 2"
        r" roots",
    ),
    Case(
        "tree-no-root",
        "a treebank's second sentence without HEAD 0",
        "TaskError file:line: 0 roots",
        treebank(["2", "3", "4", "3"]),
        TaskError,
        r"dev\.conllu:8: .* it has 0 roots",
    ),
    Case(
        "tree-cycle",
        "a treebank's second sentence whose heads 1 -> 2 -> 1 form a cycle",
        "TaskError file:line: word 1 never reaches the root",
        treebank(["2", "1", "0", "3"]),
        TaskError,
        r"dev\.conllu:8: .* it has a cycle: word 1 never reaches the root",
    ),
    Case(
        "holmes-yaml-alias-bomb",
        "a Holmes config whose probe_name nests YAML aliases 10 deep (9^10 strings)",
        "TaskError file:line: no aliases (was memory exhausted while logging)",
        holmes_config(ALIAS_BOMB),
        TaskError,
        r"config-none\.yaml:2: YAML alias \(\*name\) in a Holmes config",
    ),
    Case(
        "holmes-probe-name-list",
        "a Holmes config with probe_name: [a, b]",
        "TaskError: probe_name is a list",
        holmes_config(CONFIG.replace("probe_name: x", "probe_name: [a, b]")),
        TaskError,
        r"probe_name \['a', 'b'\] is a list; give a non-empty string",
    ),
    Case(
        "holmes-num-labels-float",
        "a Holmes config with num_labels: 2.7",
        "TaskError: a float (was truncated to 2)",
        holmes_config(CONFIG.replace("num_labels: 2", "num_labels: 2.7")),
        TaskError,
        r"num_labels 2\.7 is a float; give a whole number",
    ),
    Case(
        "holmes-config-huge",
        "a 100 kB Holmes config",
        "TaskError: refused before parsing",
        holmes_config(CONFIG + "# " + "x" * 100_000 + "\n"),
        TaskError,
        r"config-none\.yaml: 100\d\d\d bytes; a Holmes config is a few lines",
    ),
    Case(
        "item-zero-width-only",
        'SpanItem("\\u200b\\u200b") (zero-width spaces only)',
        "ItemError: only zero-width characters, no tokens (was 'truncated at the model's maximum"
        " length')",
        lambda env: bert_features(env, [SpanItem("\u200b\u200b")]),
        ItemError,
        r"text is only zero-width or other invisible format characters .* no tokens",
    ),
    Case(
        "span-zero-width",
        'a span over the zero-width space ending "cat \\u200b"',
        "ItemError: the tokenizer maps these characters to nothing",
        lambda env: bert_features(env, [SpanItem("cat \u200b", spans=((4, 5),))]),
        ItemError,
        r"covers no token: the tokenizer maps these characters to nothing",
    ),
    Case(
        "item-control-only",
        'SpanItem("\\x07\\x07") (control characters only)',
        "ItemError: the text has no tokens",
        lambda env: bert_features(env, [SpanItem("\x07\x07")]),
        ItemError,
        r"the text has no tokens",
    ),
]
