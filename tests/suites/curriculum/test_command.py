"""`lingprobe run curriculum` end to end on two phenomena of the sample, `report`, and
`lingprobe curriculum-nli` on a small copy of them."""

from __future__ import annotations

import json

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from suites.cli import main
from tests.suites.test_feature_set_suites import Spy, run


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


@pytest.mark.slow
def test_a_memory_budget_reads_the_store_and_gives_the_tables_in_memory(tmp_path, monkeypatch):
    # every layer of MiniLM; the pair input (premise, hypothesis, |p-h|: 1,152 floats) is about
    # 0.5 MiB a site over the 120 items, so the probes read it one site at a time
    argv = ["curriculum", "--phenomena", "negation", "--limit-train", "90", "--limit-test", "30"]
    argv += ["--sizes", "5,10", "--pvi-folds", "2", "--combine", "premise,hypothesis,abs_diff"]
    in_memory = run(argv, tmp_path / "memory", tmp_path / "store-memory", None)
    spy = Spy(monkeypatch)

    def no_tensor(*args: object, **kwargs: object) -> None:
        raise AssertionError("the features were held in memory")

    monkeypatch.setattr("suites.curriculum.features.task_features", no_tensor)
    on_disk = run(argv, tmp_path / "disk", tmp_path / "store-disk", "1MiB")
    assert_frame_equal(on_disk, in_memory)  # the float32 tolerances of the trainer tests
    for table in ("inoculation.parquet", "pvi.parquet", "cross_distribution.parquet"):
        ours, theirs = (
            pl.read_parquet(next((tmp_path / out / "units").iterdir()) / "negation" / table)
            for out in ("disk", "memory")
        )
        assert_frame_equal(ours, theirs)
    assert spy.lazy and all(spy.lazy)  # the features were extracted into the store only
    # the probes read whole sites in groups the budget cut: never every site at once
    whole = [(sites, shape[1]) for items, sites, shape in spy.reads if items == shape[0]]
    assert whole and all(sites < every for sites, every in whole)
