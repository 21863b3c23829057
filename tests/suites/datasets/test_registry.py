"""The dataset registry: complete, pinned, hashed, licensed; shipped samples intact."""

from __future__ import annotations

import re

import pytest

from suites.cli import main
from suites.datasets import DataSource, UnknownDatasetError, get_dataset, registry, sample_for
from suites.datasets.embedded import embedded_bytes

COMMIT_URL = re.compile(r"^https://raw\.githubusercontent\.com/[\w.-]+/[\w.-]+/[0-9a-f]{40}/")


def leaves(dataset):
    return [m for f in dataset.files for m in (f.members or (f,))]


def test_every_dataset_says_what_it_is_and_where_it_comes_from():
    for dataset in registry().values():
        assert dataset.description and dataset.licence and dataset.citation, dataset.name
        assert re.search(r"[0-9a-f]{40}", dataset.source), dataset.name  # pinned to a commit
        for file in (*dataset.files, *(m for f in dataset.files for m in f.members)):
            assert re.fullmatch(r"[0-9a-f]{64}", file.sha256) and file.size > 0, file.path
            assert file.url is None or COMMIT_URL.match(file.url), file.url
            if dataset.sample_of is None and not file.name:  # full datasets download
                assert file.url is not None, file.path


def test_the_registry_covers_what_the_suites_use():
    assert {"train", "dev", "test"} <= set(get_dataset("ud-english-ewt").keys())
    assert len(get_dataset("blimp").files) == 67
    curriculum = get_dataset("curriculum-nli")
    assert len(curriculum.files) == 36
    assert all(
        {m.key.split("/")[1] for m in f.members} == {"train", "val"} for f in curriculum.files
    )
    assert set(get_dataset("semeval-2010-task8").keys()) >= {"train", "test"}
    assert set(get_dataset("holmes-leaderboards").keys()) == {"holmes", "flash-holmes"}
    assert set(get_dataset("jiant-edge-example").keys()) == {"train", "test"}


def test_unlicensed_data_is_never_shipped():
    leaderboards = get_dataset("holmes-leaderboards")
    assert leaderboards.licence.startswith("none stated") and not leaderboards.embedded
    assert not any(f.embedded for f in leaves(leaderboards))


SAMPLED = [
    "ud-english-ewt",
    "blimp",
    "curriculum-nli",
    "semeval-2010-task8",
    "ud-french-gsd",
    "zorro",
    "uds",
]


@pytest.mark.parametrize("name", SAMPLED)
def test_every_shipped_file_decompresses_to_its_registry_hash(name):
    sample = sample_for(name)
    assert sample.embedded and sample.sample_of == name
    for file in leaves(sample):
        assert len(embedded_bytes(file)) == file.size  # embedded_bytes checks the sha256 too


def test_verbatim_samples_share_the_full_datasets_hashes():
    for name in ("blimp", "curriculum-nli", "zorro"):
        full = {f.key: f.sha256 for f in leaves(get_dataset(name))}
        for file in leaves(sample_for(name)):
            assert full[file.key] == file.sha256, file.key


def test_samples_never_touch_the_network(monkeypatch, tmp_path):
    monkeypatch.setenv("LINGPROBE_DATA_MIRROR", "http://127.0.0.1:9")
    source = DataSource(home=tmp_path, samples=True, progress=False)
    for name in SAMPLED:
        assert all(p.is_file() for p in source.fetch(name))
    # a whole shipped file of a full dataset needs no download either
    assert DataSource(home=tmp_path, progress=False).path("blimp", "causative").is_file()


def test_unknown_names_and_keys_suggest_the_closest():
    with pytest.raises(UnknownDatasetError, match="did you mean 'blimp'"):
        get_dataset("blmp")
    with pytest.raises(UnknownDatasetError, match="did you mean 'adjunct_island'"):
        get_dataset("blimp").file("adjunct_islnd")


def test_cli_list_names_every_dataset_with_its_licence(capsys):
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    for dataset in registry().values():
        line = next(line for line in out.splitlines() if line.startswith(dataset.name + " "))
        assert dataset.licence.split(" (")[0].split(":")[0] in line
    assert "data folder:" in out


def test_cli_path_prints_the_folder_of_a_shipped_dataset(capsys):
    assert main(["data", "path", "ud-english-ewt-sample"]) == 0
    folder = capsys.readouterr().out.strip()
    assert folder.endswith("ud_english_ewt_sample")
