"""`lingprobe run cc` / `lingprobe cc-semantics` end to end (tiny sizes), `report` re-rendering."""

from __future__ import annotations

import json

import polars as pl
import pytest

from suites.cli import main


def _corpus(path):
    rows = []
    for p in range(8):
        for k in range(3):
            if p % 2:
                text = f"The more{p} they practised{k}, the better they became."
            else:
                text = f"The older{p} man helped{k} the younger one."
            rows.append({"sentence": text, "label": p % 2, "pos_pattern": f"P{p}"})
    pl.DataFrame(rows).write_csv(path)
    return path


@pytest.mark.slow
def test_run_cc_writes_tables_plots_and_manifest(tmp_path, capsys):
    out = tmp_path / "syntax"
    code = main(
        [
            "run",
            "cc",
            "--models",
            "minilm",
            "--n-per-class",
            "3",
            "--features",
            "cc_start",
            "--corpus",
            str(_corpus(tmp_path / "c.csv")),
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    units = {p.name.split("__")[2]: p for p in (out / "units").iterdir()}
    assert set(units) == {"cc_cc_start", "cc_corpus"}
    unit = units["cc_cc_start"]
    manifest = json.loads((unit / "manifest.json").read_text())
    assert manifest["suite"] == "cc-syntax" and manifest["features"] == ["cc_start"]
    layers = pl.read_parquet(unit / "layers.parquet")
    assert layers.height == 7 and set(layers["feature"]) == {"cc_start"}
    values = pl.read_parquet(unit / "values.parquet")
    assert sorted(values["value"].unique()) == manifest["feature_values"]["cc_start"]["test"]
    assert (values["n"] == 6).all()  # 3 per class at every value
    corpus = pl.read_parquet(units["cc_corpus"] / "corpus_split.parquet")
    assert (corpus.group_by("pos_pattern").agg(pl.col("split").n_unique())["split"] == 1).all()
    rows = pl.read_parquet(out / "results.parquet")
    assert set(rows["task"]) == {"cc:cc_start", "cc:corpus"}
    pngs = sorted(p.name for p in (out / "cc").glob("*.png"))
    assert "accuracy_per_layer_cc_start.png" in pngs and "accuracy_per_layer_corpus.png" in pngs
    assert any(p.startswith("heatmap_") for p in pngs)
    for png in (out / "cc").glob("*.png"):
        png.unlink()
    assert main(["report", str(out)]) == 0
    assert sorted(p.name for p in (out / "cc").glob("*.png")) == pngs
    assert main(["report", str(unit)]) == 0
    assert "test accuracy per layer" in capsys.readouterr().out


@pytest.mark.slow
def test_cc_semantics_writes_the_paper_tables(tmp_path, capsys):
    out = tmp_path / "semantics"
    code = main(
        [
            "cc-semantics",
            "--models",
            "minilm",
            "--n-instances",
            "2",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "masked LM" in printed and "LM head: randomly initialised" in printed
    runs = pl.read_parquet(out / "runs.parquet")
    assert runs["lm_head"][0].startswith("randomly initialised")  # MiniLM ships no MLM head
    for name in ("table2", "table3", "table4", "table5", "scores", "dropped_pairs"):
        assert (out / f"{name}.parquet").exists()
    table2 = pl.read_parquet(out / "table2.parquet")
    assert table2.columns == [
        "model",
        "accuracy_S1",
        "accuracy_S2",
        "flip_S2",
        "flip_S3",
        "flip_S4",
    ]
    assert json.loads((out / "manifest.json").read_text())["suite"] == "cc-semantics"
    (out / "table5.parquet").unlink()
    assert main(["report", str(out)]) == 0
    assert pl.read_parquet(out / "table5.parquet").height == 3


def test_bad_arguments_exit_with_code_2(tmp_path, capsys):
    code = main(["run", "cc", "--models", "minilm", "--features", "width", "--out", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert "width" in err and "choose among" in err and len(err.strip().splitlines()) == 1
