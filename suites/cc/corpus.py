"""The corpus experiment's data: user-supplied labelled sentences, split train/test.

The paper's C4 sentences are not available here; any file with columns `sentence`, `label`
(1 = CC instance, 0 = not; also `positive`/`negative`, `true`/`false`) and optionally
`pos_pattern` (the sentence's POS-tag sequence) takes their place. With `pos_pattern`, the split
keeps every pattern on one side, as the paper did (§3.1.2), so the probe meets unseen patterns.
Formats: .csv, .tsv, .jsonl, .parquet.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from suites.cc.errors import CorpusError
from suites.datasets.errors import DataNotFoundError
from suites.readers.text_files import read_csv_frame

LABEL_WORDS = {
    "1": 1,
    "0": 0,
    "positive": 1,
    "negative": 0,
    "true": 1,
    "false": 0,
    "pos": 1,
    "neg": 0,
}


def read_labelled_sentences(path: str | Path) -> pl.DataFrame:
    """Columns sentence (str), label (int 0/1), length (words), and pos_pattern when given."""
    source = Path(path)
    if not source.is_file():
        raise DataNotFoundError(
            f"corpus file {source} does not exist; pass a .csv/.tsv/.jsonl/.parquet"
        )
    readers = {
        ".csv": lambda p: read_csv_frame(p, error=CorpusError),
        ".tsv": lambda p: read_csv_frame(p, separator="\t", error=CorpusError, quote_char=None),
        ".jsonl": pl.read_ndjson,
        ".parquet": pl.read_parquet,
    }
    reader = readers.get(source.suffix.lower())
    if reader is None:
        raise CorpusError(f"{source}: unknown format {source.suffix!r}; use {', '.join(readers)}")
    return labelled_frame(reader(source), str(source))


def labelled_frame(frame: pl.DataFrame, origin: str = "the frame") -> pl.DataFrame:
    """Validate and normalise a frame of labelled sentences (see `read_labelled_sentences`)."""
    missing = [c for c in ("sentence", "label") if c not in frame.columns]
    if missing:
        raise CorpusError(f"{origin} lacks columns {missing}; it needs sentence and label")
    labels = []
    for row, (sentence, label) in enumerate(frame.select("sentence", "label").iter_rows()):
        if sentence is None or not str(sentence).strip():
            raise CorpusError(f"{origin}, row {row}: empty sentence; remove the row")
        key = str(label).strip().lower()
        if key.endswith(".0"):
            key = key[:-2]
        if key not in LABEL_WORDS:
            raise CorpusError(
                f"{origin}, row {row}: label {label!r}; use 1/0 (or positive/negative)"
            )
        labels.append(LABEL_WORDS[key])
    columns = [pl.col("sentence").cast(pl.String)]
    if "pos_pattern" in frame.columns:
        columns.append(pl.col("pos_pattern").cast(pl.String))
    out = frame.select(columns).with_columns(pl.Series("label", labels, dtype=pl.Int64))
    out = out.with_columns(
        pl.col("sentence")
        .str.split(" ")
        .list.eval(pl.element().filter(pl.element().str.contains(r"\w")))
        .list.len()
        .cast(pl.Int64)
        .alias("length")
    )
    if "pos_pattern" in out.columns and out["pos_pattern"].null_count():
        row = out["pos_pattern"].is_null().arg_true()[0]
        raise CorpusError(f"{origin}, row {row}: pos_pattern is empty; fill it or drop the column")
    return out


def split_corpus(frame: pl.DataFrame, test_fraction: float = 0.3, seed: int = 0) -> pl.DataFrame:
    """Add `split` (train/test), keeping each POS pattern on one side when `pos_pattern` is there.

    Units (patterns, or single sentences without them) are visited in a seeded random order; a
    unit goes to test while test holds fewer than `test_fraction` of the sentences of each label
    the unit contains, else to train. Both sides must end up with both labels.
    """
    if not 0 < test_fraction < 1:
        raise CorpusError(f"test_fraction={test_fraction}; choose a fraction between 0 and 1")
    unit = (
        pl.col("pos_pattern")
        if "pos_pattern" in frame.columns
        else pl.int_range(pl.len()).cast(pl.String)
    )
    units = frame.with_columns(unit.alias("_unit"))
    counts = units.group_by("_unit", maintain_order=True).agg(
        (pl.col("label") == 0).sum().alias("n0"), (pl.col("label") == 1).sum().alias("n1")
    )
    totals = (frame.height - int(frame["label"].sum()), int(frame["label"].sum()))
    targets = [test_fraction * t for t in totals]
    held = [0, 0]
    to_test = set()
    order = np.random.default_rng(seed).permutation(counts.height)
    rows = counts.rows()
    for index in order:
        name, n0, n1 = rows[index]
        sizes = (n0, n1)
        if all(held[k] < targets[k] for k in (0, 1) if sizes[k]):
            to_test.add(name)
            held = [held[0] + n0, held[1] + n1]
    out = frame.with_columns(
        pl.when(units["_unit"].is_in(list(to_test)))
        .then(pl.lit("test"))
        .otherwise(pl.lit("train"))
        .alias("split")
    )
    present = out.group_by("split").agg(pl.col("label").n_unique().alias("n"))
    if present.height < 2 or min(present["n"].to_list()) < 2:
        how = ", by POS pattern" if "pos_pattern" in frame.columns else ""
        raise CorpusError(
            f"cannot split {frame.height} sentences ({totals[1]} positive, {totals[0]} negative"
            f"{how}) so that train and test both hold both labels; add sentences (or patterns)"
            " of the rarer label"
        )
    return out
