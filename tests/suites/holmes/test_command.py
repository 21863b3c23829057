"""`lingprobe run holmes` and `lingprobe report` on a Holmes folder."""

from __future__ import annotations

import json

import polars as pl

from suites.cli import main
from tests.suites.holmes.leaderboards import MODELS, write_leaderboards


def test_published_leaderboards(tmp_path, capsys):
    holmes, flash = write_leaderboards(tmp_path)
    out = tmp_path / "published"
    argv = ["holmes-published", "--out", str(out)]
    argv += ["--leaderboard", str(holmes), "--flash-leaderboard", str(flash)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert MODELS[0] in printed and "reliability vs efficiency" in printed
    ranking = pl.read_parquet(out / "ranking.parquet")
    assert set(ranking["group"]) == {
        "overall",
        "morphology",
        "syntax",
        "semantics",
        "reasoning",
        "discourse",
    }
    assert pl.read_parquet(out / "flash.parquet").height == 9
    assert main(["report", str(out)]) == 0
    assert MODELS[0] in capsys.readouterr().out


def test_published_leaderboards_offline_say_how_to_get_them(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LINGPROBE_DATA_MIRROR", "http://127.0.0.1:9")  # nothing listens there
    assert main(["holmes-published", "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot download holmes/leaderboard_holmes.csv" in err[-1]
    assert "LINGPROBE_DATA_MIRROR" in err[-1]


def test_list_tasks(capsys):
    assert main(["holmes-tasks", "--data", "samples"]) == 0
    names = capsys.readouterr().out.split()
    assert "blimp-adjunct_island" in names and "upos" in names


def test_glove_run_with_twin_and_flash_resumes(tmp_path, capsys):
    out = tmp_path / "run"
    argv = [
        "run",
        "holmes",
        "--models",
        "glove:6B.50d",
        "--init",
        "pretrained,random",
        "--tasks",
        "blimp-causative",
        "--limit-blimp-pairs",
        "40",
        "--seeds",
        "2",
        "--epochs",
        "2",
        "--flash",
        "--quiet",
        "--data",
        "samples",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    board = pl.read_parquet(out / "holmes" / "leaderboard.parquet")
    assert set(board["model"]) == {"glove:6B.50d", "glove:6B.50d@random"}
    assert sorted(board["fraction"].unique().to_list()) == sorted(
        [1.0] + [1 / 2**i for i in range(1, 10)]
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["suite"] == "sweep" and len(manifest["units"]) == 2
    unit = json.loads((out / "units" / manifest["units"][0] / "manifest.json").read_text())
    assert unit["suite"] == "holmes" and unit["config"]["grid"]["seeds"] == [0, 1]
    summary = out / "holmes"
    assert (summary / "flash.png").exists() and (summary / "ranking.png").exists()
    capsys.readouterr()
    before = sorted(p.stat().st_mtime_ns for p in (out / "units").rglob("*.parquet"))
    assert main(argv) == 0  # resumes: nothing left to run
    assert sorted(p.stat().st_mtime_ns for p in (out / "units").rglob("*.parquet")) == before
    changed = [*argv[:-1], str(out), "--seeds", "1"]
    assert main(changed) == 0  # other settings: new units beside the old ones
    assert len(json.loads((out / "manifest.json").read_text())["units"]) == 2
    assert len(list((out / "units").iterdir())) == 4
    assert main(["report", str(out)]) == 0
    assert "glove:6B.50d@random" in capsys.readouterr().out


def test_bad_invocations(tmp_path, capsys):
    assert main(["run", "holmes", "--out", str(tmp_path)]) == 2
    assert "holmes needs tasks" in capsys.readouterr().err
    assert (
        main(
            [
                "run",
                "holmes",
                "--models",
                "glove:6B.50d",
                "--tasks",
                "nope",
                "--data",
                "samples",
                "--out",
                str(tmp_path),
            ]
        )
        == 2
    )
    assert "unknown Holmes task 'nope'" in capsys.readouterr().err
    assert (
        main(
            [
                "run",
                "holmes",
                "--models",
                "no/such-model-xyz",
                "--tasks",
                "blimp-causative",
                "--limit-blimp-pairs",
                "10",
                "--data",
                "samples",
                "--out",
                str(tmp_path / "m"),
                "--quiet",
            ]
        )
        == 2
    )
    assert "no/such-model-xyz" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing")]) == 2
