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


def glue_like(test_labels: list[int | None]) -> DatasetDict:
    """A GLUE-style dataset: ClassLabel labels, the test split's labels -1 (or None)."""
    features = Features({"sentence": Value("string"), "label": ClassLabel(names=["neg", "pos"])})
    train = Dataset.from_dict({"sentence": ["a b", "c d", "e f"], "label": [0, 1, 1]}, features)
    texts = [f"t{i}" for i in range(len(test_labels))]
    test = Dataset.from_dict({"sentence": texts, "label": test_labels}, features)
    return DatasetDict(train=train, test=test)


def test_minus_one_and_none_are_unlabelled_items_left_out_and_counted(caplog):
    with caplog.at_level("WARNING", logger="suites.hf_labels"):
        task = Task.from_hf(glue_like([-1, 0, None, -1]), text="sentence")
    assert task.labels == ("neg", "pos")  # not a class "None", and -1 is not the last class
    assert task.frame.filter(split="test")["text"].to_list() == ["t1"]
    assert task.frame.filter(split="test")["label"].to_list() == ["neg"]
    assert len(task) == 4
    assert "3 items have no label (-1 or None: 3 in test)" in caplog.text


def test_plain_integer_and_string_columns_treat_minus_one_and_none_as_no_label(caplog):
    ints = Dataset.from_dict({"text": ["a", "b", "c", "d"], "label": [0, 1, -1, 1]})
    with caplog.at_level("WARNING", logger="suites.hf_labels"):
        task = Task.from_hf(ints)
    assert task.labels == ("0", "1") and task.frame["text"].to_list() == ["a", "b", "d"]
    assert "cast the column to strings" in caplog.text
    strings = Dataset.from_dict({"text": ["a", "b", "c"], "label": ["p", None, "q"]})
    assert Task.from_hf(strings).frame["label"].to_list() == ["p", "q"]
    values = Dataset.from_dict({"text": ["a", "b", "c"], "label": [0.5, None, -1.0]})
    assert Task.from_hf(values).frame["label"].to_list() == [0.5, -1.0]  # -1.0 is a value


def test_an_unlabelled_train_split_is_an_error():
    features = Features({"sentence": Value("string"), "label": ClassLabel(names=["neg", "pos"])})
    test_only = Dataset.from_dict({"sentence": ["a", "b"], "label": [-1, -1]}, features)
    with pytest.raises(TaskError, match=r"all 2 train items have no label"):
        Task.from_hf(test_only, text="sentence")


def test_labels_mixing_integers_and_strings_are_one_error():
    splits = DatasetDict(
        train=Dataset.from_dict({"text": ["a", "b"], "label": [0, 1]}),
        test=Dataset.from_dict({"text": ["c"], "label": ["pos"]}),
    )
    with pytest.raises(TaskError, match=r"mixes integers and strings: split 'train' row 0 is 0"):
        Task.from_hf(splits)
    glue = glue_like([0])  # class names in train, the same names as strings in test: one set
    glue["test"] = Dataset.from_dict({"sentence": ["c"], "label": ["pos"]})
    task = Task.from_hf(glue, text="sentence")
    assert task.targets.tolist() == [0, 1, 1, 1] and task.labels == ("neg", "pos")


def test_a_no_label_id_inside_a_multilabel_row_is_refused():
    names = Features({"text": Value("string"), "label": List(ClassLabel(names=["x", "y"]))})
    table = Dataset.from_dict({"text": ["a", "b"], "label": [[0], [1, -1]]}, features=names)
    with pytest.raises(TaskError, match=r"row 1: -1 lies outside the ClassLabel's ids 0\.\.1"):
        Task.from_hf(table)


def test_an_outlier_integer_label_gets_a_dense_id():
    labels = [0, 1, 2, 49_999, 1, 0]
    table = Dataset.from_dict({"text": [f"w{i}" for i in range(6)], "label": labels})
    task = Task.from_hf(table)
    assert task.num_classes == 4
    names = [task.labels[i] for i in task.targets.tolist()]
    assert names == [str(v) for v in labels]
