"""`lingprobe run curriculum` end to end on two phenomena of the sample, `report`, and
`lingprobe curriculum-nli` on a small copy of them."""

from __future__ import annotations

import json

import polars as pl
import pytest

from suites.cli import main


@pytest.fixture()
def small_data(samples, tmp_path):
    """The first lines of two phenomena (small slices of the shipped data, written to tmp)."""
    root = tmp_path / "curriculum_nli"
    for name, n_train, n_val in (("negation", 90, 30), ("lexical", 60, 30)):
        for split, n in (("train", n_train), ("val", n_val)):
            source = samples.path("curriculum-nli", f"{name}/{split}")
            lines = source.read_text().splitlines()
            step = max(1, len(lines) // n)  # spread over the file: lexical is sorted by label
            (root / name).mkdir(parents=True, exist_ok=True)
            (root / name / f"{split}.jsonl").write_text("\n".join(lines[::step][:n]))
    return tmp_path


@pytest.mark.slow
def test_run_and_report(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(
        [
            "run",
            "curriculum",
            "--data",
            "samples",
            "--phenomena",
            "lexical,negation",
            "--limit-train",
            "90",
            "--limit-test",
            "30",
            "--out",
            str(out),
            "--layers",
            "last",
            "--sizes",
            "5,10",
            "--seeds",
            "1",
            "--epochs",
            "3",
            "--pvi-folds",
            "2",
            "--quiet",
            "--combine",
            "premise,hypothesis,abs_diff",
            "--halves",
            "per_label",
        ]
    )
    assert code == 0
    units = {p.name.split("__")[2]: p for p in (out / "units").iterdir()}
    assert set(units) == {"lexical", "negation"}
    for name, unit in units.items():
        manifest = json.loads((unit / "manifest.json").read_text())
        assert manifest["suite"] == "curriculum" and manifest["phenomena"] == [name]
        assert manifest["config"]["combine"] == ["premise", "hypothesis", "abs_diff"]
        assert manifest["config"]["halves"] == "per_label"
        for table in ("inoculation", "pvi", "cross_distribution"):
            assert (unit / name / f"{table}.parquet").exists()
    summary = out / "curriculum" / "minilm"
    for name in ("lexical", "negation"):
        assert (summary / "plots" / f"inoculation_{name}.png").exists()
        assert (summary / "plots" / f"cross_distribution_{name}.png").exists()
    for table in (
        "learning_curves",
        "hypothesis_only",
        "v_information",
        "cross_distribution_matrix",
    ):
        assert pl.read_parquet(summary / f"{table}.parquet").height > 0
    assert (summary / "plots" / "hypothesis_only.png").exists()
    gap = pl.read_parquet(summary / "hypothesis_only.parquet")
    assert sorted(gap["phenomenon"]) == ["lexical", "negation"]
    (summary / "plots" / "v_information.png").unlink()
    assert main(["report", str(out)]) == 0
    assert (summary / "plots" / "v_information.png").exists()
    assert main(["report", str(units["lexical"])]) == 0
    assert "V-information" in capsys.readouterr().out


def test_bad_options_fail_with_one_line(tmp_path, capsys):
    common = ["run", "curriculum", "--data", "samples", "--out", str(tmp_path / "o")]
    assert main([*common, "--analyses", "bogus"]) == 2
    assert "choose from" in capsys.readouterr().err
    assert main([*common, "--analyses", "zero-shot"]) == 2
    assert "lingprobe curriculum-nli" in capsys.readouterr().err
    assert main([*common, "--phenomena", "nothing"]) == 2
    assert "not in the data" in capsys.readouterr().err
    assert main([*common, "--sizes", "ten"]) == 2
    assert "integer" in capsys.readouterr().err


@pytest.mark.slow
def test_zero_shot_needs_a_label_order(small_data, tmp_path, capsys):
    out = tmp_path / "zs"
    common = [
        "curriculum-nli",
        "--data",
        str(small_data),
        "--out",
        str(out),
        "--analyses",
        "zero-shot",
        "--quiet",
    ]
    assert main(common) == 2
    assert "label order explicitly" in capsys.readouterr().err
    # MiniLM's fresh 2-way head: usable on the 2-way phenomenon only
    with pytest.warns(UserWarning, match="left out"):
        assert main([*common, "--label-order", "entailed,not-entailed"]) == 0
    table = pl.read_parquet(out / "zero_shot.parquet")
    assert table["phenomenon"].to_list() == ["lexical"]
