"""UDS proto-role and genericity tasks: every annotated node lands on the word it names, labels
follow the sign of the normalized value, splits follow the EWT v1.2 file."""

from __future__ import annotations

import json

import pytest

from suites.holmes.catalog import available_tasks, build_task
from suites.holmes.inventory import holmes_datasets
from suites.holmes.uds import read_uds, task_names
from suites.tasks import TaskError


def words_of(path):
    """{sentence number: [word forms]} of a CoNLL-U file, read independently of lingprobe."""
    sentences: list[list[str]] = []
    current: list[str] = []
    for line in path.read_text("utf-8").splitlines():
        cols = line.split("\t")
        if not line.strip():
            if current:
                sentences.append(current)
            current = []
        elif len(cols) == 10 and cols[0].isdigit():
            current.append(cols[1])
    if current:
        sentences.append(current)
    return dict(enumerate(sentences, start=1))


def test_every_uds_name_is_a_holmes_dataset_and_listed():
    inventory = set(holmes_datasets()["dataset"])
    assert len(task_names()) == 20 and set(task_names()) <= inventory
    assert set(task_names()) <= set(available_tasks())


@pytest.mark.parametrize(
    ("name", "key", "prop"),
    [
        ("protoroles-volition", "protoroles", "volition"),
        ("arg-is-particular", "genericity", "arg-particular"),
    ],
)
def test_uds_items_match_the_annotation_file(samples, name, key, prop):
    annotations = json.loads(samples.path("uds", key).read_text("utf-8"))["data"]
    banks = {s: words_of(samples.path("uds", f"ewt-{s}")) for s in ("dev", "test")}
    expected = []
    for graph, nodes in sorted(annotations.items()):
        split, number = graph.split("-")[1], int(graph.split("-")[2])
        for node, values in nodes.items():
            value = values[key].get(prop, {}).get("value")
            if value:
                words = banks[split][number]
                forms = [words[int(p.rsplit("-", 1)[1]) - 1] for p in node.split("%%")]
                expected.append((split, forms, "true" if value > 0 else "false"))
    task = read_uds(name, samples)
    got = [
        (
            "dev" if row["split"] == "train" else "test",
            [row["text"][a:b] for a, b in row["spans"]],
            row["label"],
        )
        for row in task.frame.iter_rows(named=True)
    ]
    assert sorted(got) == sorted(expected) and len(got) > 100
    assert task.metadata["probe_type"] == (
        "token(s) pair classification" if key == "protoroles" else "token(s) classification"
    )


def test_uds_tasks_built_through_the_catalog_carve_dev(samples):
    task = build_task("pred-is-hypothetical", samples)
    assert set(task.frame["split"]) == {"train", "dev", "test"}
    assert (task.phenomenon_type, task.phenomenon) == ("semantics", "genericity")


def test_an_unknown_uds_property_is_refused(samples):
    with pytest.raises(TaskError, match="not a UDS task"):
        read_uds("protoroles-manner", samples)
