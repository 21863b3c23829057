"""Data folders and downloads: a user's own copies, lingprobe's cache, mirrors, redirects."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from suites.datasets import DataFile, DataIntegrityError, DataNotFoundError, DataSource, as_source
from suites.datasets.integrity import trusted_files
from suites.outputs import write_manifest
from tests.bad_inputs.case import Case, Env
from tests.bad_inputs.suite_cases import CommandFailed, cli
from tests.suites.datasets.file_server import serve

DATA = b"the registry's bytes\n" * 100
FILE = "toy/a.bin"


def entry(url: str) -> DataFile:
    digest = hashlib.sha256(DATA).hexdigest()
    return DataFile(key="a", path=FILE, sha256=digest, size=len(DATA), url=f"{url}/{FILE}")


@contextmanager
def served(env: Env) -> Iterator[tuple[str, list[str], dict[str, str]]]:
    """A server of `DATA` at `FILE`: (base URL, paths asked for, redirects to set)."""
    root = env.tmp()
    (root / "toy").mkdir()
    (root / FILE).write_bytes(DATA)
    with serve(root) as server:
        yield server.url, server.requests, server.redirects


@contextmanager
def environment(**values: str | None) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    try:
        for key, value in values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def own_copy(home: Path) -> Path:
    path = home / FILE
    path.parent.mkdir(parents=True)
    path.write_bytes(b"my own annotated copy\n")
    return path


def own_copy_differs(env: Env) -> None:
    home = env.tmp()
    path = own_copy(home)
    with served(env) as (url, requests, _):
        try:
            DataSource(home=home, progress=False).file_path(entry(url))
        finally:
            assert path.read_bytes() == b"my own annotated copy\n" and requests == []


def own_copy_trusted(env: Env) -> None:
    home = env.tmp()
    path = own_copy(home)
    with served(env) as (url, requests, _):
        assert as_source(home, trust_local=True).file_path(entry(url)) == path
        assert requests == []
    manifest = write_manifest(env.tmp(), "edge").read_text()
    assert str(path) in manifest and any(r["path"] == str(path) for r in trusted_files())


def cache_copy_damaged(env: Env) -> None:
    cache = env.tmp()
    with environment(LINGPROBE_CACHE=str(cache), LINGPROBE_DATA=None), served(env) as (url, *_):
        source = DataSource(progress=False)
        path = source.file_path(entry(url))
        path.write_bytes(b"damaged")
        assert source.file_path(entry(url)).read_bytes() == DATA
        (aside,) = path.parent.glob("a.bin.corrupt-*")
        assert aside.read_bytes() == b"damaged"


def umask(env: Env) -> None:
    old = os.umask(0o002)
    try:
        with served(env) as (url, *_):
            path = DataSource(home=env.tmp(), progress=False).file_path(entry(url))
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o664, oct(path.stat().st_mode)


def redirect_to_file(env: Env) -> None:
    with served(env) as (url, _, redirects):
        redirects[f"/{FILE}"] = "file:///etc/passwd"
        DataSource(home=env.tmp(), progress=False).file_path(entry(url))


def data_is_file(env: Env) -> None:
    file = env.tmp() / "notes.txt"
    file.write_text("x")
    cli("data", "fetch", "jiant-edge-example", "--data", str(file))(env)


def env_data_is_file(env: Env) -> None:
    file = env.tmp() / "notes.txt"
    file.write_text("x")
    with environment(LINGPROBE_DATA=str(file)):
        cli("data", "list")(env)


DATA_CASES = [
    Case(
        "data-own-copy-differs",
        "a file in `--data DIR` / `$LINGPROBE_DATA` whose sha256 differs from the registry's",
        "DataIntegrityError naming the file; left as it is; move it away or --trust-local",
        own_copy_differs,
        DataIntegrityError,
        r"a\.bin does not match .* left as it is: move it away .* --trust-local",
    ),
    Case(
        "data-own-copy-trusted",
        "the same with `--trust-local` (`trust_local=True`)",
        "the file is used as it is, logged, and the run's manifest lists it with both hashes",
        own_copy_trusted,
        None,
        "",
    ),
    Case(
        "data-cache-copy-damaged",
        "a damaged file inside lingprobe's own cache folder",
        "moved aside to NAME.corrupt-<time> (never deleted) and fetched again",
        cache_copy_damaged,
        None,
        "",
    ),
    Case(
        "data-download-umask",
        "a download with umask 002 (pooch writes 0600)",
        "the file gets mode 0664, as `open` would give",
        umask,
        None,
        "",
    ),
    Case(
        "data-redirect-to-file",
        "a download URL that redirects to `file:///etc/passwd`",
        "DataNotFoundError: redirected to a local file, refused (not a hash mismatch)",
        redirect_to_file,
        DataNotFoundError,
        r"was redirected to a local file \(file:///etc/passwd\), which is refused",
    ),
    Case(
        "cli-mirror-ftp",
        "`lingprobe data fetch --mirror ftp://...`",
        "exit 2, one line: only http(s) URLs, file:// URLs and folders",
        cli("data", "fetch", "ud-english-ewt", "--mirror", "ftp://h/d", "--data", "TMP"),
        CommandFailed,
        r"--mirror 'ftp://h/d': the ftp:// scheme is not supported; give an http:// or https://",
    ),
    Case(
        "cli-data-is-file",
        "`--data` naming a file",
        "exit 2, one line: names a file, not a folder",
        data_is_file,
        CommandFailed,
        r"notes\.txt' names a file, not a folder",
    ),
    Case(
        "cli-env-data-is-file",
        "`$LINGPROBE_DATA` naming a file",
        "exit 2, one line naming the variable: a file, not a folder",
        env_data_is_file,
        CommandFailed,
        r"\$LINGPROBE_DATA='.*notes\.txt' names a file, not a folder",
    ),
]
