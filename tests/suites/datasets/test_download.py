"""Downloads through a real HTTP server on 127.0.0.1: cache, verification, mirrors, failures."""

from __future__ import annotations

import hashlib
import io
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from suites.cli import main
from suites.datasets import DataFile, DataIntegrityError, DataNotFoundError, DataSource, get_dataset
from suites.datasets.download import download
from suites.datasets.embedded import embedded_bytes
from tests.suites.datasets.file_server import serve

REPO = Path(__file__).resolve().parents[3]
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens there


def entry(server_url: str, path: str, data: bytes, **changes) -> DataFile:
    fields = {
        "key": Path(path).stem,
        "path": path,
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
        "url": f"{server_url}/{path}",
    }
    return DataFile(**(fields | changes))


def files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


@pytest.fixture()
def served(tmp_path):
    root = tmp_path / "server"
    (root / "toy").mkdir(parents=True)
    data = os.urandom(200_000)
    (root / "toy" / "a.bin").write_bytes(data)
    with serve(root) as server:
        yield server, data


def test_a_file_downloads_into_the_cache_verified_and_is_not_fetched_twice(served, tmp_path):
    server, data = served
    home = tmp_path / "home"
    file = entry(server.url, "toy/a.bin", data)
    source = DataSource(home=home, progress=False)
    path = source.file_path(file)
    assert path == home / "toy" / "a.bin" and path.read_bytes() == data
    assert server.requests == ["/toy/a.bin"]
    assert source.file_path(file) == path
    assert server.requests == ["/toy/a.bin"]  # the second call never touched the network


def test_a_hash_mismatch_is_rejected_and_nothing_is_left(served, tmp_path):
    server, data = served
    home = tmp_path / "home"
    file = entry(server.url, "toy/a.bin", data, sha256="0" * 64)
    with pytest.raises(DataIntegrityError, match=r"toy/a.bin from http://127.0.0.1:\d+/toy/a.bin"):
        DataSource(home=home, progress=False).file_path(file)
    assert files_under(home) == [] and not home.exists()


def test_a_damaged_file_in_the_cache_is_moved_aside_and_fetched_again(
    served, tmp_path, monkeypatch, caplog
):
    server, data = served
    monkeypatch.setenv("LINGPROBE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("LINGPROBE_DATA")
    file = entry(server.url, "toy/a.bin", data)
    source = DataSource(progress=False)
    path = source.file_path(file)
    assert path == tmp_path / "cache" / "datasets" / "toy" / "a.bin"
    damaged = bytearray(data)
    damaged[1000] ^= 0xFF
    path.write_bytes(bytes(damaged))
    assert source.file_path(file).read_bytes() == data
    assert len(server.requests) == 2
    (aside,) = path.parent.glob("a.bin.corrupt-*")
    assert aside.read_bytes() == bytes(damaged)  # never deleted
    assert "does not match the registry's sha256; moved it to a.bin.corrupt-" in caplog.text


KILL_SCRIPT = """
import sys
from pathlib import Path
from suites.datasets.download import download
from suites.datasets.registry import DataFile
url, path, sha, size, home = sys.argv[1:]
download(DataFile(key="a", path=path, sha256=sha, size=int(size), url=url), Path(home), None, False)
"""


def test_a_download_killed_half_way_leaves_nothing_that_counts_as_cached(served, tmp_path):
    server, data = served
    home = tmp_path / "home"
    file = entry(server.url, "toy/a.bin", data)
    server.stall_after = len(data) // 2
    argv = [sys.executable, "-c", KILL_SCRIPT, file.url, file.path, file.sha256, str(file.size)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen([*argv, str(home)], env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until a third of the bytes sit in pooch's temporary file
        partial = [p for p in files_under(home) if p.stat().st_size >= len(data) // 3]
        if partial:
            break
        time.sleep(0.05)
    assert partial, "the download never started"
    process.send_signal(signal.SIGKILL)
    process.wait()
    target = home / "toy" / "a.bin"
    assert not target.exists() and partial[0] != target
    server.stall_after = None
    assert DataSource(home=home, progress=False).file_path(file).read_bytes() == data


def test_the_mirror_setting_serves_registry_paths(tmp_path, monkeypatch):
    # A real registry file (a BLiMP paradigm lingprobe also ships) from a mirror of the registry's
    # paths, verified against the registry's sha256.
    blimp = get_dataset("blimp")
    file, _ = blimp.file("causative")
    mirror = tmp_path / "mirror"
    (mirror / "blimp").mkdir(parents=True)
    (mirror / "blimp" / "causative.jsonl").write_bytes(embedded_bytes(file))
    with serve(mirror) as server:
        home = tmp_path / "home"
        path = download(file, home, server.url, progress=False)
        assert path == home / "blimp" / "causative.jsonl"
        assert server.requests == ["/blimp/causative.jsonl"]
        # the environment variable works like --mirror, for files not shipped
        data = b"mirrored bytes\n"
        (mirror / "toy").mkdir()
        (mirror / "toy" / "b.txt").write_bytes(data)
        toy = entry("https://example.invalid", "toy/b.txt", data)
        monkeypatch.setenv("LINGPROBE_DATA_MIRROR", server.url)
        assert DataSource(home=home, progress=False).file_path(toy).read_bytes() == data
        assert server.requests[-1] == "/toy/b.txt"
    # a local folder is a mirror too
    local = download(file, tmp_path / "home2", str(mirror), progress=False)
    assert local.read_bytes() == embedded_bytes(file)


def test_archive_members_are_extracted_and_verified(tmp_path):
    members = {"task/train.jsonl": b'{"a": 1}\n', "task/val.jsonl": b'{"a": 2}\n'}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, body in members.items():
            archive.writestr(name, body)
    root = tmp_path / "server"
    (root / "bundle").mkdir(parents=True)
    (root / "bundle" / "task.zip").write_bytes(buffer.getvalue())
    with serve(root) as server:
        parts = tuple(
            DataFile(
                key=name.removesuffix(".jsonl"),
                path=f"bundle/{name}",
                sha256=hashlib.sha256(body).hexdigest(),
                size=len(body),
                name=name,
            )
            for name, body in members.items()
        )
        archive = entry(server.url, "bundle/task.zip", buffer.getvalue(), members=parts)
        source = DataSource(home=tmp_path / "home", progress=False)
        path = source.file_path(parts[1], archive)
        assert path.read_bytes() == members["task/val.jsonl"]
        assert source.file_path(parts[0], archive).read_bytes() == members["task/train.jsonl"]
        assert server.requests == ["/bundle/task.zip"]  # one download for both members


def test_offline_the_error_names_the_file_the_url_and_two_ways_out(tmp_path):
    file, _ = get_dataset("ud-english-ewt").file("test")
    home = tmp_path / "home"
    with pytest.raises(DataNotFoundError) as caught:
        DataSource(home=home, mirror=CLOSED, progress=False).file_path(file)
    message = str(caught.value)
    assert "ud_english_ewt/en_ewt-ud-test.conllu" in message
    assert f"{CLOSED}/ud_english_ewt/en_ewt-ud-test.conllu" in message
    assert "LINGPROBE_DATA_MIRROR or --mirror URL" in message and "LINGPROBE_DATA" in message
    assert not home.exists()


def test_cli_fetch_with_an_unreachable_mirror_exits_2_and_leaves_the_cache_empty(tmp_path, capsys):
    home = tmp_path / "home"
    argv = ["data", "fetch", "ud-english-ewt", "--mirror", CLOSED, "--data", str(home)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("lingprobe: error: cannot download")
    assert "en_ewt-ud-train.conllu" in err[0] and "--mirror URL" in err[0]
    assert files_under(home) == []


def test_cli_verify_finds_a_damaged_file_and_leaves_it(tmp_path, capsys):
    home = tmp_path / "home"
    assert main(["data", "fetch", "jiant-edge-example", "--data", str(home)]) == 0
    damaged = home / "jiant_edge_probing_example" / "spr1_test.jsonl"
    damaged.write_text("not the fixture\n")
    capsys.readouterr()
    assert main(["data", "verify", "--data", str(home)]) == 1
    out = capsys.readouterr().out
    assert "DAMAGED  jiant-edge-example" in out and "2 files checked" in out
    assert "left as it is: move it away" in out
    assert damaged.read_text() == "not the fixture\n"  # a folder the user named: untouched
    damaged.unlink()
    assert main(["data", "verify", "--data", str(home)]) == 0


def test_cli_verify_moves_a_damaged_file_of_the_cache_aside(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LINGPROBE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("LINGPROBE_DATA")
    assert main(["data", "fetch", "jiant-edge-example"]) == 0
    damaged = tmp_path / "cache" / "datasets" / "jiant_edge_probing_example" / "spr1_test.jsonl"
    damaged.write_text("not the fixture\n")
    capsys.readouterr()
    assert main(["data", "verify"]) == 1
    assert "moved aside" in capsys.readouterr().out
    (aside,) = damaged.parent.glob("spr1_test.jsonl.corrupt-*")
    assert aside.read_text() == "not the fixture\n" and not damaged.exists()
    assert main(["data", "verify"]) == 0
