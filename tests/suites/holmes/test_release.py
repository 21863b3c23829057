"""The Holmes release-format reader on hand-made fixture folders of every task type."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from suites.holmes.release import parse_inputs, read_holmes, read_holmes_tree
from suites.holmes.release_config import read_config
from suites.tasks import TaskError

FIXTURES = Path(__file__).parent / "fixtures"


def test_sentence_task_and_folds():
    task = read_holmes(FIXTURES / "sentence")
    assert (task.name, task.input_type, task.target_type) == (
        "fixture-sentence",
        "sentence",
        "classification",
    )
    assert task.labels == ("bad", "good")
    assert task.frame["split"].to_list() == ["train", "train", "train", "dev", "test", "test"]
    assert task.metadata["probe_type"] == "sentence classification"
    other = read_holmes(FIXTURES / "sentence", fold=1)
    assert other.frame["split"].to_list() == ["test", "train", "train", "train", "dev", "train"]
    with pytest.raises(TaskError, match=r"no column set-3; choose fold from \['set-0', 'set-1'\]"):
        read_holmes(FIXTURES / "sentence", fold=3)


def test_sentence_pair_task():
    task = read_holmes(FIXTURES / "sentence-pair")
    assert task.input_type == "sentence pair"
    first = task.items()[2]
    assert (first.text, first.text_pair) == ("She won't go.", "She stays home.")


def test_token_task_with_a_span_group():
    task = read_holmes(FIXTURES / "tokens")
    assert task.input_type == "span" and task.labels == ("NN", "VBD", "VBN")
    items = task.items()
    assert items[0].text[slice(*items[0].spans[0])] == "cucumber"
    # ('New', 0, 0, 3, 'g') and ('York', 0, 4, 8, 'g') form one span
    assert items[4].spans == ((0, 8),) and task.keys[4] == "New York"
    assert task.metadata["probe_type"] == "token(s) classification"


def test_token_pair_tasks_in_one_and_in_two_contexts():
    same = read_holmes(FIXTURES / "tokens-pair")
    assert same.input_type == "span pair"
    assert same.metadata["probe_type"] == "token(s) pair classification"
    item = same.items()[0]
    assert [item.text[s:e] for s, e in item.spans] == ["into", "air"]
    cross = read_holmes(FIXTURES / "tokens-pair-cross")
    item = cross.items()[0]
    assert (item.text, item.text_pair) == ("The disease spread.", "The symptoms worsened.")
    assert item.text[slice(*item.spans[0])] == "disease"
    assert item.text_pair[slice(*item.pair_spans[0])] == "symptoms"
    assert cross.input_type == "span pair"


def test_regression_without_split_columns_gets_seeded_70_10_20():
    task = read_holmes(FIXTURES / "regression")
    assert task.target_type == "regression" and task.num_classes == 1
    assert task.targets.dtype.is_floating_point and float(task.targets[0]) == 8.0
    counts = dict(task.frame.group_by("split").len().iter_rows())
    assert counts == {"train": 14, "dev": 2, "test": 4}
    again = read_holmes(FIXTURES / "regression")
    assert again.frame["split"].equals(task.frame["split"])
    assert (
        not read_holmes(FIXTURES / "regression", split_seed=1)
        .frame["split"]
        .equals(task.frame["split"])
    )


def test_every_fixture_through_the_tree_reader():
    tasks = read_holmes_tree(FIXTURES)
    assert [t.name for t in tasks] == [
        "fixture-regression",
        "fixture-sentence",
        "fixture-sentence-pair",
        "fixture-tokens",
        "fixture-tokens-pair",
        "fixture-tokens-pair-cross",
    ]


def _copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(FIXTURES / name, target)
    return target


def _edit(folder: Path, old: str, new: str) -> None:
    samples = folder / "samples.csv"
    text = samples.read_text()
    assert old in text
    samples.write_text(text.replace(old, new))


def test_a_malformed_row_names_the_row(tmp_path):
    folder = _copy(tmp_path, "tokens")
    _edit(folder, "[('hurled', 0, 25, 31)]", "[('hurled', 0, 25, 31]")
    with pytest.raises(
        TaskError,
        match=r"samples.csv data row 3 \(id 2\): column 'inputs' is not"
        r" a Python literal",
    ):
        read_holmes(folder)


def test_literals_are_never_evaluated(tmp_path):
    folder = _copy(tmp_path, "sentence")
    _edit(folder, "\"['A dog barks.']\"", "\"__import__('os').getcwd()\"")
    with pytest.raises(TaskError, match=r"data row 3 \(id 2\): column 'inputs' is not a Python"):
        read_holmes(folder)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "[('was', 0, 21, 24)]",
            "[('was', 0, 22, 25)]",
            r"data row 2 \(id 1\): input .* names 'was' but context 0\[22:25\] is 'as '",
        ),
        (
            "[('was', 0, 21, 24)]",
            "[('was', 1, 21, 24)]",
            r"data row 2 \(id 1\): .* points at context 1, but the row has 1 context",
        ),
        ("[('was', 0, 21, 24)]", "[('was', 0, 21, 99)]", r"data row 2 .* offsets outside"),
        ("[('was', 0, 21, 24)]", "[('was', '0', 21, 24)]", r"data row 2 .* integer index"),
        (
            "[('was', 0, 21, 24)]",
            "[('was', 0, 21, 24), ('And', 0, 0, 3)]",
            r"data row 2 .* \(spans, pair spans\) is \(2, None\)"
            r" but .* data row 1 .* has \(1, None\)",
        ),
        (",VBN,dev", ",,dev", r"data row 3 \(id 2\): the label is empty"),
        (",VBN,dev", ",VBN,holdout", r"data row 3 .* set-0 is 'holdout'; use train, dev or test"),
        ("NN,test\n4", "JJ,test\n4", r"4 distinct labels .* num_labels: 3"),
    ],
)
def test_bad_rows(tmp_path, old, new, message):
    folder = _copy(tmp_path, "tokens")
    _edit(folder, old, new)
    with pytest.raises(TaskError, match=message):
        read_holmes(folder)


def test_unused_rows_are_dropped(tmp_path):
    folder = _copy(tmp_path, "tokens")
    _edit(folder, ",VBN,dev", ",VBN,")
    task = read_holmes(folder)
    assert len(task) == 4 and task.metadata["unused_rows"] == 1


def test_bad_configs(tmp_path):
    folder = _copy(tmp_path, "sentence")
    config = folder / "config-none.yaml"
    config.write_text("probe_name: x\nprobe_task_type: SENTENCE\nnum_labels: 2\n")
    with pytest.raises(TaskError, match=r"lacks keys \['control_task_type'\]"):
        read_config(config)
    config.write_text(
        "probe_name: x\nprobe_task_type: WORDS\ncontrol_task_type: NONE\nnum_labels: 2\n"
    )
    with pytest.raises(TaskError, match="probe_task_type 'WORDS' is unknown"):
        read_holmes(folder)
    config.unlink()
    (folder / "config-a.yaml").write_text("")
    (folder / "config-b.yaml").write_text("")
    with pytest.raises(TaskError, match=r"no config-none.yaml; pass control= one of \['a', 'b'\]"):
        read_holmes(folder)
    regression = _copy(tmp_path, "regression")
    _edit(regression, ",8.0\n", ",eight\n")
    with pytest.raises(TaskError, match=r"data row 1 \(id 0\): label 'eight' is not a number"):
        read_holmes(regression)
    with pytest.raises(FileNotFoundError, match=r"samples\.csv does not exist"):
        read_holmes(tmp_path)


def test_parse_inputs_shapes():
    assert parse_inputs("'One sentence.'", None, "here") == {
        "text": "One sentence.",
        "text_pair": None,
    }
    with pytest.raises(TaskError, match="here: inputs mix sentences and tuples"):
        parse_inputs("['a', ('a', 0, 0, 1)]", "['a']", "here")
    with pytest.raises(TaskError, match="here: 3 input sentences"):
        parse_inputs("['a', 'b', 'c']", None, "here")
    with pytest.raises(TaskError, match="keep a group in one context"):
        parse_inputs("[('a', 0, 0, 1, 7), ('b', 1, 0, 1, 7)]", "['a', 'b']", "here")
