"""Zorro and UDS, the Holmes sources lingprobe ships a part of, served from a 127.0.0.1 mirror of
their registry paths, verified, and built into Holmes tasks under the leaderboard's names."""

from __future__ import annotations

import pytest

from suites.datasets import DataSource, get_dataset
from suites.datasets.download import download
from suites.datasets.embedded import embedded_bytes
from suites.holmes.catalog import build_task
from tests.suites.datasets.file_server import serve


@pytest.mark.parametrize(
    ("sample", "tasks"),
    [
        ("zorro-sample", ["zorro-case-subjective_pronoun", "zorro-quantifiers-existential_there"]),
        ("uds-sample", ["protoroles-sentient", "arg-is-abstract", "pred-is-particular"]),
    ],
)
def test_a_source_fetched_from_a_local_mirror_builds_its_holmes_tasks(sample, tasks, tmp_path):
    dataset = get_dataset(sample)
    mirror, home = tmp_path / "mirror", tmp_path / "home"
    for file in dataset.files:
        (mirror / file.path).parent.mkdir(parents=True, exist_ok=True)
        (mirror / file.path).write_bytes(embedded_bytes(file))
    with serve(mirror) as server:
        for file in dataset.files:
            assert download(file, home, server.url, progress=False) == home / file.path
        assert len(server.requests) == len(dataset.files)
    source = DataSource(home=home, samples=True, progress=False)
    for name in tasks:
        task = build_task(name, source)
        assert task.name == name and task.labels in (("bad", "good"), ("false", "true"))
        assert set(task.frame["split"]) == {"train", "dev", "test"}
        assert str(home) in task.metadata["source"] or task.metadata["source"] == "uds"
