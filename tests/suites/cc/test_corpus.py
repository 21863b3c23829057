"""The corpus reader: labels normalised, POS patterns kept apart between train and test."""

from __future__ import annotations

import polars as pl
import pytest

from suites.cc import CorpusError, labelled_frame, read_labelled_sentences, split_corpus


def _corpus(n_patterns: int = 12, per_pattern: int = 4) -> pl.DataFrame:
    rows = []
    for p in range(n_patterns):
        for k in range(per_pattern):
            label = p % 2
            text = (
                f"The more{k} we try{p}, the better it gets." if label else f"The older man {p}{k}."
            )
            rows.append({"sentence": text, "label": label, "pos_pattern": f"DET ADJ {p}"})
    return pl.DataFrame(rows)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_reads_every_format(tmp_path, suffix):
    frame = _corpus(4, 2).with_columns(
        pl.col("label").replace_strict({1: "positive", 0: "Negative"})
    )
    path = tmp_path / f"corpus{suffix}"
    {
        ".csv": frame.write_csv,
        ".tsv": lambda p: frame.write_csv(p, separator="\t"),
        ".jsonl": frame.write_ndjson,
        ".parquet": frame.write_parquet,
    }[suffix](path)
    read = read_labelled_sentences(path)
    assert read.columns == ["sentence", "pos_pattern", "label", "length"]
    assert read["label"].to_list() == [0, 0, 1, 1, 0, 0, 1, 1]
    assert read["length"][0] == len(frame["sentence"][0].split())


def test_pos_patterns_never_cross_the_split():
    frame = labelled_frame(_corpus())
    split = split_corpus(frame, test_fraction=0.3, seed=1)
    sides = split.group_by("pos_pattern").agg(pl.col("split").n_unique())
    assert (sides["split"] == 1).all()
    for side in ("train", "test"):
        assert set(split.filter(pl.col("split") == side)["label"]) == {0, 1}
    share = (split["split"] == "test").mean()
    assert 0.15 <= share <= 0.5
    assert split.equals(split_corpus(frame, test_fraction=0.3, seed=1))


def test_without_patterns_sentences_are_split_per_label():
    frame = labelled_frame(_corpus().drop("pos_pattern"))
    split = split_corpus(frame, test_fraction=0.25, seed=0)
    counts = split.group_by("split", "label").len().sort("split", "label")
    assert counts.filter(pl.col("split") == "test")["len"].to_list() == [6, 6]


def test_bad_files_are_named(tmp_path):
    with pytest.raises(CorpusError, match="lacks columns"):
        labelled_frame(pl.DataFrame({"text": ["a"], "label": [1]}))
    with pytest.raises(CorpusError, match="row 1: label 'maybe'"):
        labelled_frame(pl.DataFrame({"sentence": ["a", "b"], "label": ["1", "maybe"]}))
    with pytest.raises(CorpusError, match="both hold both labels"):
        split_corpus(labelled_frame(_corpus(2, 3)), 0.3)
    with pytest.raises(CorpusError, match="unknown format"):
        (tmp_path / "c.txt").write_text("x")
        read_labelled_sentences(tmp_path / "c.txt")
