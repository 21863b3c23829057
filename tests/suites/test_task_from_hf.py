"""`Task.from_hf`: Hugging Face datasets (in memory, DatasetDict, local files) as tasks."""

from __future__ import annotations

import pytest
from datasets import ClassLabel, Dataset, DatasetDict, Features, List, Value

from suites.tasks import Task, TaskError

ROWS = {
    "sentence": ["The cat sat.", "Dogs bark.", "A bird sings.", "Cats nap."],
    "number": [0, 1, 0, 1],
    "subject": [[4, 7], [0, 4], [2, 6], [0, 4]],
}
FEATURES = Features(
    {
        "sentence": Value("string"),
        "number": ClassLabel(names=["singular", "plural"]),
        "subject": List(Value("int64")),
    }
)


@pytest.fixture()
def table() -> Dataset:
    return Dataset.from_dict(ROWS, features=FEATURES)


def test_an_in_memory_dataset_keeps_class_label_order_and_reads_spans(table):
    task = Task.from_hf(table, text="sentence", label="number", spans="subject", name="num")
    assert (task.name, task.target_type, task.labels) == (
        "num",
        "classification",
        ("singular", "plural"),
    )
    assert task.frame["label"].to_list() == ["singular", "plural", "singular", "plural"]
    assert task.frame["spans"].to_list()[0] == [[4, 7]] and task.keys[0] == "cat"
    assert task.frame["split"].unique().to_list() == ["train"]
    assert task.input_type == "span" and len(task.items()) == 4


def test_a_dataset_dict_maps_its_splits(table):
    splits = DatasetDict(train=table, validation=table.select([0]), test=table.select([1, 2]))
    task = Task.from_hf(splits, text="sentence", label="number")
    counts = dict(task.frame.group_by("split").len().iter_rows())
    assert counts == {"train": 4, "dev": 1, "test": 2}
    only = Task.from_hf(splits, text="sentence", label="number", split={"test": "test"})
    assert only.frame["split"].to_list() == ["test", "test"]
    with pytest.raises(TaskError, match=r"split\(s\) \['dev2'\] are not in the dataset"):
        Task.from_hf(splits, text="sentence", label="number", split={"dev2": "dev"})


def test_a_local_parquet_and_csv_file(table, tmp_path):
    table.to_parquet(tmp_path / "number.parquet")
    task = Task.from_hf(tmp_path / "number.parquet", text="sentence", label="number")
    assert task.name == "number" and task.labels == ("singular", "plural") and len(task) == 4
    (tmp_path / "rated.csv").write_text("text,score,part\na b,0.5,train\nc d,1.5,test\n")
    rated = Task.from_hf(str(tmp_path / "rated.csv"), label="score", split_column="part")
    assert rated.target_type == "regression" and rated.frame["label"].to_list() == [0.5, 1.5]
    assert rated.frame["split"].to_list() == ["train", "test"]


def test_multilabel_and_pairs():
    table = Dataset.from_dict(
        {"p": ["a", "b"], "h": ["c", "d"], "tags": [["x", "y"], ["y"]]},
    )
    task = Task.from_hf(table, text="p", text_pair="h", label="tags")
    assert task.target_type == "multilabel" and task.labels == ("x", "y")
    assert task.input_type == "sentence pair" and task.targets.tolist() == [[1, 1], [0, 1]]


def test_bad_column_names_name_the_column_and_list_the_real_ones(table):
    with pytest.raises(TaskError, match=r"column 'text' \(the text= argument\) is not in the"):
        Task.from_hf(table, label="number")
    with pytest.raises(TaskError, match=r"its columns are \['sentence', 'number', 'subject'\]"):
        Task.from_hf(table, text="sentence", label="number", spans="object")
    with pytest.raises(TaskError, match="split must be one of"):
        Task.from_hf(table, text="sentence", label="number", split="validation")
