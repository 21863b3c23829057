"""The UD treebanks beyond English: registered, pinned and licensed; the shipped ones served from
a 127.0.0.1 mirror of their registry paths, verified, and built into tasks."""

from __future__ import annotations

import re

import pytest

from suites.cli import main
from suites.datasets import DataSource, get_dataset, registry
from suites.datasets.download import download
from suites.datasets.embedded import embedded_bytes
from suites.holmes.catalog import build_task
from tests.suites.datasets.file_server import serve

UD = [d for n, d in registry().items() if n.startswith("ud-") and "english" not in n]
FULL = [d for d in UD if d.sample_of is None]
SCRIPT = re.compile(r"\(([A-Za-z +]+) script\)")


def test_twenty_treebanks_in_fifteen_languages_and_five_scripts():
    assert len(FULL) >= 20
    languages = {d.name.split("-")[1] for d in FULL}
    scripts = {SCRIPT.search(d.description).group(1) for d in FULL}  # type: ignore[union-attr]
    assert len(languages) >= 15 and len(scripts) >= 5
    assert {"Latin", "Cyrillic", "Arabic", "Devanagari", "Han", "Hangul"} <= scripts
    for dataset in FULL:
        keys = set(dataset.keys())
        assert "test" in keys and "licence" in keys and keys & {"train", "dev"}, dataset.name
        assert dataset.licence == "CC BY-SA 4.0" and dataset.citation, dataset.name
        commit = re.search(r"/tree/([0-9a-f]{40})$", dataset.source).group(1)  # type: ignore[union-attr]
        assert all(commit in f.url for f in dataset.files if f.url), dataset.name
        if not keys >= {"train", "dev"}:  # the description says which file is missing
            assert "not registered" in dataset.description, dataset.name


def test_data_list_shows_every_treebank_with_its_licence(capsys):
    assert main(["data", "list"]) == 0
    listed = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line}
    for dataset in UD:
        assert dataset.name in listed and "CC BY-SA 4.0" in listed[dataset.name]


# the registry entries whose files lingprobe ships: Marathi UFAL whole (byte-identical to the
# pinned commit) and the French GSD sample; the others' files are too large to ship.
SHIPPED = [d for d in UD if all(f.embedded for f in d.files)]


def test_the_shipped_treebanks_are_two_non_english_ones():
    assert {d.name for d in SHIPPED} == {"ud-marathi-ufal", "ud-french-gsd-sample"}
    assert get_dataset("ud-marathi-ufal").sample_of is None  # the whole treebank ships


@pytest.mark.parametrize("dataset", SHIPPED, ids=lambda d: d.name)
def test_a_treebank_fetched_from_a_local_mirror_builds_its_tasks(dataset, tmp_path):
    mirror, home = tmp_path / "mirror", tmp_path / "home"
    for file in dataset.files:
        (mirror / file.path).parent.mkdir(parents=True, exist_ok=True)
        (mirror / file.path).write_bytes(embedded_bytes(file))
    with serve(mirror) as server:
        for file in dataset.files:
            assert download(file, home, server.url, progress=False) == home / file.path
        assert sorted(server.requests) == sorted(f"/{f.path}" for f in dataset.files)
    source = DataSource(home=home, samples=dataset.sample_of is not None, progress=False)
    assert all(p.is_relative_to(home) for p in source.fetch(dataset.name))
    bank = dataset.sample_of or dataset.name
    upos = build_task(f"{bank}:upos", source)
    assert upos.name == f"{bank}:upos" and {"NOUN", "VERB", "ADP"} <= set(upos.labels)
    assert set(upos.frame["split"]) == {"train", "dev", "test"}
    deprel = build_task(f"{bank}:deprel", source)
    assert deprel.input_type == "span pair" and "nsubj" in deprel.labels
    number = build_task(f"{bank}:feats:Number", source)
    assert set(number.labels) <= {"Sing", "Plur", "Dual"} and len(number.labels) >= 2
