"""Inoculation, hypothesis-only, PVI and cross-distribution with MiniLM on two shared phenomena."""

from __future__ import annotations

import polars as pl
import pytest
import torch

from internals import SpanItem
from internals import sites as site_rules
from suites.curriculum import (
    CurriculumConfig,
    cross_distribution,
    cross_matrix,
    hypothesis_gap,
    inoculation,
    learning_curves,
    load_phenomena,
    nli_features,
    pvi_scores,
    v_information_table,
)
from suites.suite import with_probe

pytestmark = pytest.mark.slow
PHENOMENA = ("boolean", "syntactic_alternation")  # one 3-way, one 2-way
CONFIG = with_probe(CurriculumConfig(sizes=(10, 50), pvi_folds=2), seeds=(0, 1), epochs=5)


@pytest.fixture(scope="module")
def prepared(minilm):
    out = {}
    for name, whole in load_phenomena(PHENOMENA, "samples").items():
        task = whole.subsample({"train": 240, "test": 90}, seed=0)
        out[name] = task, nli_features(minilm, task, site_rules.last(minilm), progress=False)
    return out


def test_hypothesis_half_is_the_hypothesis_alone(minilm, prepared):
    task, feats = prepared["syntactic_alternation"]
    alone = minilm.features(
        [SpanItem(h) for h in task.frame["text_pair"][:6]], site_rules.last(minilm), progress=False
    )
    assert torch.allclose(feats.hypothesis_only()[:6], alone, atol=1e-5)
    assert feats.pair().shape[-1] == 2 * minilm.dim
    full = feats.pair(("premise", "hypothesis", "abs_diff", "product"))
    assert torch.allclose(
        full[..., 2 * minilm.dim : 3 * minilm.dim], (feats.premise - feats.hypothesis).abs()
    )


def test_inoculation_and_hypothesis_only(prepared):
    tables = [inoculation(task, feats, CONFIG, progress=False) for task, feats in prepared.values()]
    table = pl.concat(tables)
    test_acc = table.filter(split="test", metric="accuracy")
    # 2 phenomena x 2 inputs x 2 sizes x 2 seeds x 1 site
    assert test_acc.height == 16
    assert test_acc["value"].is_between(0, 1).all()
    sizes = dict(
        table.filter(phenomenon="boolean")
        .group_by("n_per_label")
        .agg(pl.col("n_train").first())
        .iter_rows()
    )
    assert sizes == {10: 30, 50: 150}
    assert set(table["input"]) == {"pair", "hypothesis"}
    curves = learning_curves(table)
    assert curves.height == 8 and (curves["n_seeds"] == 2).all()
    assert (curves["ci_low"] <= curves["mean"]).all() and (
        curves["mean"] <= curves["ci_high"]
    ).all()
    assert table.filter(split="train")["ci_low"].null_count() == table.filter(split="train").height
    gap = hypothesis_gap(table)
    assert gap["phenomenon"].to_list() == list(PHENOMENA)
    assert (gap["n_per_label"] == 50).all()
    assert (gap["gap"] - (gap["full_mean"] - gap["hypothesis_mean"])).abs().max() < 1e-12
    task, feats = prepared["boolean"]
    again = inoculation(task, feats, CONFIG, inputs=("hypothesis",), progress=False)
    assert again.equals(tables[0].filter(input="hypothesis"))  # seeded: reproducible


def test_pvi_and_cross_distribution(prepared):
    for task, feats in prepared.values():
        table = pvi_scores(task, feats, CONFIG, progress=False)
        assert table.height == len(task) and table["pvi"].is_finite().all()
        vinfo = v_information_table(table)
        assert set(vinfo["split"]) == {"train", "test"}
        for split in ("train", "test"):
            part = table.filter(split=split)
            simple, hard = part.filter(difficulty="simple"), part.filter(difficulty="hard")
            assert abs(simple.height - hard.height) <= 1
            assert simple["pvi"].min() >= hard["pvi"].max()
        cross = cross_distribution(task, feats, table, CONFIG, progress=False)
        matrix = cross_matrix(cross)
        assert matrix.select("train_half", "test_half").rows() == [
            ("hard", "hard"),
            ("hard", "simple"),
            ("simple", "hard"),
            ("simple", "simple"),
        ]
        assert matrix["mean"].is_between(0, 1).all()
        n_test = dict(matrix.select("test_half", "n_test").unique().iter_rows())
        assert n_test["simple"] + n_test["hard"] == 90
