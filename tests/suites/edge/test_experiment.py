"""Edge experiments end to end: pretrained vs random on EWT, drop tables, CLI and demo."""

from __future__ import annotations

import json

import polars as pl
import pytest

from internals import load_subject, sites
from suites.cli import main
from suites.edge import read_conllu
from suites.edge.experiment import (
    EdgeConfig,
    drop_table,
    pretrained_vs_random,
    run_edge,
    with_test_sets,
)
from suites.suite import with_probe


@pytest.fixture(scope="module")
def ewt(samples):
    train_file, dev_file = (
        samples.path("ud-english-ewt", "train"),
        samples.path("ud-english-ewt", "dev"),
    )
    train = read_conllu(train_file, "upos", limit_sentences=300)
    test = read_conllu(dev_file, "upos", split="test", limit_sentences=80)
    return train, test


@pytest.mark.slow
def test_pretrained_minilm_beats_its_random_twin_on_upos(minilm, ewt):
    train, test = ewt
    twin = load_subject("sentence-transformers/all-MiniLM-L6-v2", init="random")
    config = with_probe(EdgeConfig(), seeds=(0, 1), epochs=10, control=True)
    results = run_edge([minilm, twin], train, test, sites.last(minilm), config, progress=False)
    versus = results.pretrained_vs_random("original").row(0, named=True)
    print(
        f"\nUPOS accuracy, last layer, original test: pretrained {versus['pretrained']:.1f}%,"
        f" random {versus['random']:.1f}%"
    )
    assert versus["pretrained"] >= versus["random"] + 20
    tested = results.comparisons.filter(split="test").row(0, named=True)
    assert tested["ci_low"] <= tested["difference"] <= tested["ci_high"]
    assert tested["difference"] == pytest.approx((versus["pretrained"] - versus["random"]) / 100)
    assert tested["ci_low"] > 0 and tested["p_holm"] < 0.05  # 20+ points on 80 sentences
    bounds = results.intervals.filter(split="test", variant="task", init="pretrained").row(
        0, named=True
    )
    assert bounds["ci_low"] * 100 <= versus["pretrained"] <= bounds["ci_high"] * 100
    table = results.heuristics
    assert table["heuristic"].to_list() == ["mem_exact", "mem_freq", "mem_uniform"]
    assert set(results.scores["variant"].unique()) == {"task", "control"}
    assert set(with_test_sets(results.scores)["test_set"].unique()) == {
        "original",
        "mem_exact",
        "mem_freq",
        "mem_uniform",
    }


def test_drop_formula_and_pivot():
    scores = pl.DataFrame(
        {
            "task": ["t"] * 4,
            "model": ["m"] * 4,
            "init": ["pretrained", "pretrained", "random", "random"],
            "site": ["encoder.6"] * 4,
            "layer": [6] * 4,
            "seed": [0] * 4,
            "variant": ["task"] * 4,
            "split": ["test", "test:mem_exact"] * 2,
            "metric": ["accuracy"] * 4,
            "value": [0.80, 0.60, 0.50, 0.20],
        }
    )
    drops = drop_table(scores).sort("init")
    assert drops["drop_pct"].to_list() == pytest.approx(
        [25.0, 60.0]
    )  # (80-60)*100/80, (50-20)*100/50
    versus = pretrained_vs_random(scores).row(0, named=True)
    assert versus["pretrained"] == pytest.approx(60.0) and versus["random"] == pytest.approx(20.0)


@pytest.fixture(scope="module")
def tiny_conllu(tmp_path_factory, samples):
    folder = tmp_path_factory.mktemp("conllu")
    source = samples.path("ud-english-ewt", "dev").read_text().split("\n\n")
    (folder / "train.conllu").write_text("\n\n".join(source[:40]) + "\n\n")
    (folder / "test.conllu").write_text("\n\n".join(source[40:55]) + "\n\n")
    return folder


@pytest.mark.slow
def test_cli_run_edge_and_report(tiny_conllu, tmp_path, capsys):
    out = tmp_path / "out"
    args = [
        "run",
        "edge",
        "--models",
        "minilm",
        "--task",
        "conllu:deprel",
        "--train-file",
        str(tiny_conllu / "train.conllu"),
        "--test-file",
        str(tiny_conllu / "test.conllu"),
        "--layers",
        "0,6",
        "--seeds",
        "1",
        "--epochs",
        "2",
        "--out",
        str(out),
        "--quiet",
    ]
    assert main(args) == 0
    for name in ("heuristics", "drops", "pretrained_vs_random", "all_scores"):
        assert (out / "edge" / f"{name}.parquet").exists()
    assert list((out / "edge" / "plots").glob("*.png"))
    (unit,) = (out / "units").iterdir()
    (out / "edge" / "drops.parquet").unlink()
    assert main(["report", str(out)]) == 0
    assert (out / "edge" / "drops.parquet").exists()
    assert main(["report", str(unit)]) == 0
    assert "paper Table 2" in capsys.readouterr().out


def test_cli_errors_are_one_line_with_exit_code_2(tiny_conllu, tmp_path, capsys):
    base = ["run", "edge", "--train-file", str(tiny_conllu / "train.conllu")]
    base += ["--out", str(tmp_path / "out"), "--quiet"]
    assert main([*base, "--test-file", str(tmp_path / "missing.conllu")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing.conllu does not exist" in err[0]
    test = str(tiny_conllu / "test.conllu")
    assert main([*base, "--test-file", test, "--models", "no-org/none"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot load 'no-org/none'" in err[0] and "failures.json" in err[0]
    assert main([*base, "--test-file", test, "--seeds", "0", "--epochs", "x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "epochs='x': give an integer" in err[0]
    assert main(["report", str(tmp_path / "nothing")]) == 2


@pytest.mark.slow
def test_demo_runs_on_the_shipped_sample(tmp_path, capsys):
    out = tmp_path / "demo"
    code = main(
        [
            "demo",
            "--out",
            str(out),
            "--limit-sentences",
            "40",
            "--seeds",
            "1",
            "--epochs",
            "2",
            "--layers",
            "0,6",
            "--quiet",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "paper Tables 5-6" in printed
    assert "Pretrained vs random per layer (score % [95% bootstrap CI]" in printed
    assert f"interactive report: {out / 'report.html'}" in printed
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count("Plotly.newPlot") >= 3
    edge = out / "edge"
    tested = pl.read_parquet(edge / "pretrained_vs_random_tests.parquet")
    assert set(tested["layer"]) == {0, 6} and tested["p_value"].is_between(0, 1).all()
    assert (tested["ci_low"] <= tested["difference"]).all()
    assert (tested["difference"] <= tested["ci_high"]).all()
    assert (tested["p_holm"] >= tested["p_value"]).all()
    tasks = pl.read_parquet(edge / "all_scores.parquet")["task"].unique().sort().to_list()
    assert tasks == ["ud-english-ewt:deprel", "ud-english-ewt:upos"]
    kinds = ("", "_heuristics", "_drops", "_selectivity")  # per task: curves, Table 2, drops, sel.
    assert sorted(p.name for p in (edge / "plots").glob("*.png")) == sorted(
        f"ud-english-ewt-{t}{k}.png" for t in ("upos", "deprel") for k in kinds
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["suite"] == "sweep" and manifest["status"] == "done"
    assert manifest["started"] <= manifest["finished"]
    assert len(manifest["units"]) == 4  # MiniLM and its twin x UPOS and deprel
    environment = manifest["environment"]
    assert environment["command"] and environment["lingprobe"] and environment["device"]
    assert {"torch", "transformers", "nnsight", "transformer-lens", "numpy"} <= set(
        environment["libraries"]
    )
    units = [
        json.loads((out / "units" / u / "manifest.json").read_text()) for u in manifest["units"]
    ]
    assert sorted(u["models"][0]["init"] for u in units) == ["pretrained"] * 2 + ["random"] * 2
    for unit in units:
        assert unit["suite"] == "edge" and unit["status"] == "done"
        (model,) = unit["models"]
        assert len(model["content_key"]) >= 16 and model["dtype"] == "float32"
        (data,) = unit["data"]
        assert data["name"] == "ud-english-ewt" and len(data["files"]) == 2
        assert all(len(f["sha256"]) == 64 for f in data["files"])
        assert unit["settings"]["grid"]["seeds"] == [0] and unit["settings"]["layers"] == "0,6"
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "run: sweep (done)" in printed and "paper Tables 5-6" in printed
