"""The layer-wise syntax probe: mechanics on toy features, and MiniLM on held-apart vocabulary."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import torch
from scipy import stats

from internals import Site
from suites.cc import SyntaxProbeConfig, generate, layer_predictions, probe_frames
from suites.cc.syntax_probe import accuracy_tables
from suites.errors import TaskError


def test_layer_predictions_find_the_separable_site():
    g = torch.Generator().manual_seed(0)
    n, dim = 200, 8
    labels = torch.arange(n) % 2
    noise = torch.randn(n, dim, generator=g)
    signal = torch.randn(n, dim, generator=g)
    signal[:, 0] += 6.0 * (2 * labels - 1)
    feats = torch.stack([noise, signal], dim=1)  # [item, site, dim]
    train, test = torch.arange(n) < 120, torch.arange(n) >= 120
    predicted = layer_predictions(feats[train], labels[train], feats[test], SyntaxProbeConfig())
    accuracy = (predicted == labels[test]).double().mean(dim=1)
    assert accuracy[1] == 1.0
    assert abs(accuracy[0] - 0.5) < 0.2


def test_accuracy_tables_by_hand():
    test = pl.DataFrame({"label": [1, 0, 1, 0], "value": [3, 3, 5, 5]})
    predictions = torch.tensor([[1, 0, 0, 0], [1, 1, 1, 1]])
    sites = [Site("encoder", 0), Site("encoder", 1)]
    per_site, per_value = accuracy_tables(predictions, test, sites)
    assert per_site["accuracy"].to_list() == [0.75, 0.5]
    assert per_value.sort("layer", "value")["accuracy"].to_list() == [1.0, 0.5, 0.5, 0.5]
    assert per_value["n"].to_list() == [2, 2, 2, 2]


def test_accuracy_intervals_equal_scipy_bca():
    gen = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 2, (80,), generator=gen)
    predictions = torch.where(torch.rand(2, 80, generator=gen) < 0.7, labels, 1 - labels)
    test = pl.DataFrame({"label": labels.tolist(), "value": [0] * 80})
    sites = [Site("encoder", 0), Site("encoder", 1)]
    per_site, _ = accuracy_tables(predictions, test, sites, ci=0.95, n_resamples=4000)
    for row, site in zip(per_site.iter_rows(named=True), predictions):
        correct = (site == labels).double().numpy()
        ref = stats.bootstrap(
            (correct,), np.mean, n_resamples=4000, method="BCa", rng=np.random.default_rng(1)
        ).confidence_interval
        assert row["ci_low"] == pytest.approx(ref.low, abs=0.015)
        assert row["ci_high"] == pytest.approx(ref.high, abs=0.015)
        assert row["ci_low"] <= row["accuracy"] <= row["ci_high"]


@pytest.mark.slow
def test_minilm_separates_the_classes_on_the_test_vocabulary(minilm):
    frame = pl.concat(
        [
            generate(150, "train", seed=0).with_columns(split=pl.lit("train")),
            generate(150, "test", seed=0).with_columns(split=pl.lit("test")),
        ]
    )
    layers, values = probe_frames(
        minilm, {"generated": frame}, value_column="length", progress=False
    )
    curve = dict(zip(layers["layer"].to_list(), layers["accuracy"].to_list()))
    print("MiniLM CC probe, test accuracy per layer:", {k: round(v, 3) for k, v in curve.items()})
    assert max(curve.values()) >= 0.8
    # layer 0 mean-pools the same tokens at the same positions for both members of a pair
    assert curve[0] <= 0.55
    assert set(values["value"]) == set(frame.filter(pl.col("split") == "test")["length"])


@pytest.mark.slow
@pytest.mark.parametrize("standardize", [True, False])
def test_a_memory_budget_reads_a_feature_set_with_equal_results(minilm, tmp_path, standardize):
    frame = pl.concat(
        [
            generate(30, "train", seed=0).with_columns(split=pl.lit("train")),
            generate(20, "test", seed=0).with_columns(split=pl.lit("test")),
        ]
    )
    many_tests = pl.concat(
        [
            generate(5, "train", seed=1).with_columns(split=pl.lit("train")),
            generate(60, "test", seed=1).with_columns(split=pl.lit("test")),
        ]
    )
    frames = {"generated": frame, "tail": frame.tail(70), "many-tests": many_tests}
    store = tmp_path / "store"
    held = SyntaxProbeConfig(standardize=standardize, ci=None)
    # a site's 60 train rows are 92 kB (the sites are read one at a time) and the third frame's
    # 120 test rows 184 kB (scored in blocks of rows)
    bounded = SyntaxProbeConfig(standardize=standardize, ci=None, memory="100kB")
    expected = probe_frames(minilm, frames, config=held, value_column="length", progress=False)
    found = probe_frames(
        minilm, frames, config=bounded, value_column="length", store=store, progress=False
    )
    assert (store / "derived").is_dir()  # the standardised train rows were written to disk
    for want, got in zip(expected, found):
        assert got.equals(want)


def test_a_memory_budget_needs_a_store_and_a_valid_size(minilm):
    frame = generate(2, "train", seed=0).with_columns(split=pl.lit("train"))
    frame = pl.concat([frame, frame.with_columns(split=pl.lit("test"))])
    with pytest.raises(TaskError, match=r"SyntaxProbeConfig.memory='4GiB' .* give a store"):
        probe_frames(minilm, {"f": frame}, config=SyntaxProbeConfig(memory="4GiB"))
    with pytest.raises(TaskError, match=r"SyntaxProbeConfig.memory='4 parsecs': needs"):
        SyntaxProbeConfig(memory="4 parsecs")
    assert SyntaxProbeConfig(memory="1.5 KiB").memory_bytes == 1536
