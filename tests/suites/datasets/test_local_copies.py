"""A user's own data is never deleted: a file that differs from the registry in a folder the
user named stops the run (or is used as it is with `trust_local`, recorded in the manifest);
downloads respect the umask; bad mirror and data settings and a redirect to a local file are
refused in one line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lingprobe.errors import LingprobeError
from suites.cli import main
from suites.datasets import DataIntegrityError, DataNotFoundError, DataSource, as_source
from suites.datasets.integrity import trusted_files
from suites.outputs import write_manifest
from suites.sweep.parse import parse_config
from tests.suites.datasets.file_server import serve
from tests.suites.datasets.test_download import entry

OWN_COPY = b"my own annotated copy\n"


@pytest.fixture()
def served(tmp_path):
    root = tmp_path / "server"
    (root / "toy").mkdir(parents=True)
    data = os.urandom(50_000)
    (root / "toy" / "a.bin").write_bytes(data)
    with serve(root) as server:
        yield server, data


def own_copy(home: Path) -> Path:
    path = home / "toy" / "a.bin"
    path.parent.mkdir(parents=True)
    path.write_bytes(OWN_COPY)
    return path


def test_a_differing_file_in_a_named_folder_is_left_and_the_run_stops(served, tmp_path):
    server, data = served
    home = tmp_path / "mine"
    path = own_copy(home)
    with pytest.raises(DataIntegrityError) as caught:
        DataSource(home=home, progress=False).file_path(entry(server.url, "toy/a.bin", data))
    message = str(caught.value)
    assert str(path) in message and "left as it is" in message
    assert "move it away" in message and "--trust-local" in message
    assert path.read_bytes() == OWN_COPY and sorted(home.rglob("*")) == [path.parent, path]
    assert server.requests == []  # nothing fetched over the user's file


def test_the_same_through_the_environment_variable(served, tmp_path, monkeypatch):
    server, data = served
    monkeypatch.setenv("LINGPROBE_DATA", str(tmp_path / "env"))
    path = own_copy(tmp_path / "env")
    with pytest.raises(DataIntegrityError, match="left as it is"):
        DataSource(progress=False).file_path(entry(server.url, "toy/a.bin", data))
    assert path.read_bytes() == OWN_COPY


def test_trust_local_uses_the_file_and_the_manifest_records_it(served, tmp_path, caplog):
    server, data = served
    home = tmp_path / "mine"
    path = own_copy(home)
    file = entry(server.url, "toy/a.bin", data)
    source = as_source(home, trust_local=True)
    assert source.file_path(file) == path and path.read_bytes() == OWN_COPY
    assert "used as it is (trust_local)" in caplog.text
    record = next(r for r in trusted_files() if r["path"] == str(path))
    assert record["registry_sha256"] == file.sha256 and record["sha256"] != file.sha256
    manifest = json.loads(write_manifest(tmp_path / "out", "edge").read_text())
    assert record in manifest["trusted_local"]
    assert server.requests == []


def test_cli_trust_local_wherever_data_is_accepted(tmp_path, capsys):
    home = tmp_path / "mine"
    path = home / "jiant_edge_probing_example" / "spr1_test.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("my own copy\n")
    assert main(["data", "fetch", "jiant-edge-example", "--data", str(home)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and "--trust-local" in err[0]
    argv = ["data", "fetch", "jiant-edge-example", "--data", str(home), "--trust-local"]
    assert main(argv) == 0
    assert path.read_text() == "my own copy\n"
    from suites.cli import build_parser

    suites = ("edge", "structural", "holmes", "curriculum", "cc")
    for command in [*(["run", suite] for suite in suites), ["demo"]]:
        args = build_parser().parse_args([*command, "--trust-local", "--out", "o"])
        assert args.trust_local is True


def test_a_sweep_config_takes_trust_local(tmp_path):
    table = {
        "sweep": {"out": "o", "data": "samples", "trust_local": True},
        "models": [{"name": "minilm"}],
        "suites": [{"suite": "holmes", "tasks": ["blimp-causative"]}],
    }
    assert parse_config(table, base=tmp_path).trust_local is True
    table["sweep"]["trust_local"] = "yes"
    with pytest.raises(LingprobeError, match="trust_local"):
        parse_config(table, base=tmp_path)


def test_downloads_respect_the_umask(served, tmp_path):
    server, data = served
    old = os.umask(0o002)
    try:
        path = DataSource(home=tmp_path / "h", progress=False).file_path(
            entry(server.url, "toy/a.bin", data)
        )
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o664


def test_a_redirect_to_a_local_file_is_refused_as_such(served, tmp_path):
    server, data = served
    server.redirects["/toy/a.bin"] = "file:///etc/passwd"
    with pytest.raises(DataNotFoundError) as caught:
        DataSource(home=tmp_path / "h", progress=False).file_path(
            entry(server.url, "toy/a.bin", data)
        )
    message = str(caught.value)
    assert "redirected to a local file (file:///etc/passwd), which is refused" in message
    assert "sha256" not in message
    assert not (tmp_path / "h").exists()


@pytest.mark.parametrize("where", ["flag", "environment"])
def test_cli_refuses_an_ftp_mirror_in_one_line(tmp_path, capsys, monkeypatch, where):
    argv = ["data", "fetch", "ud-english-ewt", "--data", str(tmp_path / "h")]
    if where == "flag":
        argv += ["--mirror", "ftp://mirror.example/data"]
    else:
        monkeypatch.setenv("LINGPROBE_DATA_MIRROR", "ftp://mirror.example/data")
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "ftp:// scheme is not supported" in err[0]
    assert "http:// or https:// URL, a file:// URL or a folder" in err[0]


@pytest.mark.parametrize("where", ["flag", "environment"])
def test_cli_refuses_a_data_setting_that_names_a_file(tmp_path, capsys, monkeypatch, where):
    file = tmp_path / "notes.txt"
    file.write_text("x")
    argv = ["data", "fetch", "jiant-edge-example"]
    if where == "flag":
        argv += ["--data", str(file)]
    else:
        monkeypatch.setenv("LINGPROBE_DATA", str(file))
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "names a file, not a folder" in err[0] and str(file) in err[0]
    assert file.read_text() == "x"
