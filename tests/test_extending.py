"""docs/extending.md runs: its Python blocks in one namespace, the suite it adds through
`lingprobe run` and a sweep (the same rows), its probe kind through the overrides, its metric
record through the trainer, the bootstrap, dev selection and the plots' labels, and its
dataset entry through the registry's reader."""

from __future__ import annotations

import hashlib
import re
import sys
import tomllib
import types
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
import torch
from sklearn.metrics import balanced_accuracy_score

from probes import ProbeGrid, TrainConfig, fit_probes, random_splits
from probes.metric_table import METRICS
from suites.cli import main
from suites.datasets.registry import _data_file
from suites.overrides import OverrideError, apply_probe_settings
from suites.plot_style import label
from suites.registry import SUITES
from suites.schema import RESULTS_SCHEMA
from suites.sweep import load_config, run_sweep

PAGE = Path(__file__).resolve().parents[1] / "docs" / "extending.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)


@pytest.fixture(scope="module")
def page() -> Iterator[dict]:
    module = types.ModuleType("extending_page")  # dataclasses look their module up
    sys.modules[module.__name__] = module
    exec(compile("\n".join(blocks("python")), str(PAGE), "exec"), module.__dict__)
    yield module.__dict__
    del sys.modules[module.__name__]


@pytest.fixture()
def registered(page, monkeypatch):
    suite = page["LengthSuite"]()
    monkeypatch.setitem(SUITES, suite.name, suite)
    return suite


ARGS = ["--models", "glove:6B.50d", "--seeds", "2", "--epochs", "3", "--threshold", "4"]


@pytest.mark.slow
def test_the_new_suite_runs_from_the_command_line_and_a_sweep(registered, tmp_path, capsys):
    assert main(["run", "length", *ARGS, "--out", str(tmp_path / "cli"), "--quiet"]) == 0
    config = tmp_path / "sweep.toml"
    config.write_text(
        f'[sweep]\nout = "{tmp_path / "sweep"}"\n\n[[models]]\nname = "glove:6B.50d"\n\n'
        '[[suites]]\nsuite = "length"\nthreshold = 4\n\n[probe]\nseeds = 2\nepochs = 3\n'
    )
    run_sweep(load_config(config), progress=False)
    by_cli = pl.read_parquet(tmp_path / "cli" / "results.parquet")
    assert by_cli.columns == list(RESULTS_SCHEMA)
    assert by_cli.equals(pl.read_parquet(tmp_path / "sweep" / "results.parquet"))
    majority = by_cli.filter(metric="majority_accuracy")
    assert majority.height == 2 and (majority["value"] == 4 / 6).all()  # 4 of 6 test items long
    assert set(by_cli.filter(metric="accuracy")["variant"]) == {"task", "control"}
    unit = next((tmp_path / "cli" / "units").iterdir())
    assert main(["report", str(unit)]) == 0


def test_the_new_suite_has_the_shared_flags_and_its_own(registered, capsys):
    with pytest.raises(SystemExit):
        main(["run", "length", "--help"])
    shown = capsys.readouterr().out
    for flag in ("--models", "--seeds", "--layers", "--out", "--threshold", "--epochs"):
        assert flag in shown


def test_the_probe_kind_takes_its_settings_and_refuses_others(page):
    config = page["CentroidLengthConfig"]()
    changed = apply_probe_settings(config, {"distance": "cosine"}, "length")
    assert changed.centroid.distance == "cosine"
    with pytest.raises(OverrideError, match="length suite cannot use the probe setting `epochs`"):
        apply_probe_settings(config, {"epochs": 3}, "length")
    train = torch.tensor([[1.0, 0.0], [2.0, 0.1], [0.0, 1.0], [0.1, 3.0]])
    labels = torch.tensor([0, 0, 1, 1])
    test = torch.tensor([[0.0, 0.2], [3.0, 0.0]])
    centroid = page["centroid_predictions"]
    nearest = centroid(train, labels, test, config.centroid)  # euclidean: (1.5, 0.05) is nearer
    assert nearest.tolist() == [0, 0]
    assert centroid(train, labels, test, changed.centroid).tolist() == [1, 0]  # by direction


def test_the_metric_record_is_reported_resampled_selected_and_labelled(page, monkeypatch):
    record = page["BALANCED_ACCURACY"]
    monkeypatch.setitem(METRICS, record.name, record)  # as if appended to `_RECORDS`
    gen = torch.Generator().manual_seed(0)
    feats = torch.randn(300, 2, 6, generator=gen)
    labels = (feats[:, 1, 0] > 0.8).long() + (feats[:, 1, 1] > 1.0).long()  # unbalanced
    splits = random_splits(300)
    config = TrainConfig(epochs=3, lr=1e-2, select_by="balanced_accuracy")
    res = fit_probes(feats, labels, splits, ProbeGrid(seeds=(0,)), config, progress=False)
    pred = res.predict(feats[splits.test])
    table = res.table().filter(split="test", metric="balanced_accuracy")
    for probe, site in res.probes.select("probe", "site").iter_rows():
        want = balanced_accuracy_score(labels[splits.test].numpy(), pred[probe].numpy())
        assert table.filter(site_index=site)["value"].item() == pytest.approx(want, abs=1e-12)
    summary = res.summary(n_resamples=200).filter(split="test", metric="balanced_accuracy")
    assert summary.height == 2
    assert ((summary["ci_low"] <= summary["mean"]) & (summary["mean"] <= summary["ci_high"])).all()
    assert label("balanced_accuracy") == "balanced accuracy"


def test_the_dataset_entry_reads_and_its_hash_is_the_files(page):
    (entry,) = [b for b in blocks("toml") if "toy-sentences" in b]
    data = tomllib.loads(entry)["toy-sentences"]
    (file,) = [_data_file(f) for f in data["files"]]
    content = b"The cat sleeps.\nThe cats sleep.\n"
    assert file.sha256 == hashlib.sha256(content).hexdigest() and file.size == len(content)
    assert {"description", "licence", "citation", "source"} <= set(data)
