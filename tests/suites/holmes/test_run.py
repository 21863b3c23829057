"""End-to-end Holmes runs: leaderboard, rankings, FlashHolmes, every model family (resuming is
the sweep's: tests/suites/holmes/test_command.py)."""

from __future__ import annotations

import polars as pl
import pytest

from internals import load_subject
from probes import ProbeGrid
from probes.mdl import prefix_size
from suites.holmes import HolmesConfig, run_holmes
from suites.holmes import run as holmes_run
from suites.holmes.models import model_entry
from suites.suite import Limits, with_probe
from tests.tiny_models import random_t5

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
TASKS = ["blimp-adjunct_island", "blimp-regular_plural_subject_verb_agreement_1", "upos"]
# Small and quick: 2 seeds, 5 epochs at a larger learning rate than Holmes' 5e-4.
CONFIG = with_probe(
    HolmesConfig(limits=Limits(train=300, dev=60, test=150, blimp_pairs=200)),
    seeds=(0, 1),
    train_fractions=(0.5,),
    epochs=5,
    lr=1e-2,
)


@pytest.fixture(scope="module")
def holmes_out(tmp_path_factory, minilm):
    out = tmp_path_factory.mktemp("holmes")
    board = run_holmes(
        [minilm, "minilm@random", "glove:6B.50d"],
        TASKS,
        out,
        config=CONFIG,
        data="samples",
        progress=False,
    )
    return out, board


@pytest.mark.slow
def test_leaderboard_holds_every_unit(holmes_out):
    out, board = holmes_out
    assert board.height == 3 * 3 * 2  # models x datasets x fractions (1, 1/2)
    assert set(board["model"]) == {MINILM, f"{MINILM}@random", "glove:6B.50d"}
    assert set(board["kind"]) == {"encoder", "static"}
    assert board["ranked"].all()  # the last layer only: the ranked site
    assert board.filter(pl.col("model") == "glove:6B.50d")["site"].unique().to_list() == [
        "static.0"
    ]
    assert pl.read_parquet(out / "leaderboard.parquet").equals(board)
    for name in (
        "ranking.parquet",
        "kendall.parquet",
        "discriminability.parquet",
        "flash.parquet",
        "ranking.png",
        "types.png",
        "flash.png",
        "manifest.json",
    ):
        assert (out / name).stat().st_size > 0, name
    assert not (out / "layers.png").exists()  # one layer per model


@pytest.mark.slow
def test_scores_follow_from_the_per_seed_table(holmes_out):
    out, board = holmes_out
    row = board.filter(
        (pl.col("model") == MINILM) & (pl.col("dataset") == "upos") & (pl.col("fraction") == 1.0)
    ).row(0, named=True)
    seeds = pl.read_parquet(out / "results.parquet")
    test = seeds.filter(
        (pl.col("model") == MINILM)
        & (pl.col("init") == "pretrained")
        & (pl.col("task") == "upos")
        & (pl.col("split") == "test")
        & (pl.col("metric") == "macro_f1")
        & (pl.col("mask") == 1.0)
    )
    task = test.filter(pl.col("variant") == "task")["value"]
    control = test.filter(pl.col("variant") == "control")["value"]
    assert row["score"] == pytest.approx(task.mean())
    assert row["sigma"] == pytest.approx(task.std())
    assert row["selectivity"] == pytest.approx(task.mean() - control.mean())
    assert (row["n_train"], row["n_dev"], row["n_test"], row["n_seeds"]) == (300, 60, 150, 2)
    half = board.filter(pl.col("fraction") == 0.5)
    assert (
        half["n_train_used"]
        == half["n_train"].map_elements(lambda n: prefix_size(0.5, n), return_dtype=pl.Int64)
    ).all()
    assert half["compression"].is_null().all()
    full = board.filter(pl.col("fraction") == 1.0)
    assert (full["compression"] > 0).all() and (full["sigma"] >= 0).all()
    assert full["score"].is_between(0, 1).all()


@pytest.mark.slow
def test_pretrained_minilm_ranks_first_and_beats_its_random_twin(holmes_out):
    out, board = holmes_out
    ranking = pl.read_parquet(out / "ranking.parquet").filter(pl.col("group") == "overall")
    assert ranking["model"][0] == MINILM
    full = board.filter(pl.col("fraction") == 1.0)

    def score(model: str, dataset: str) -> float:
        return full.filter((pl.col("model") == model) & (pl.col("dataset") == dataset))[
            "score"
        ].item()

    assert score(MINILM, "upos") > score(f"{MINILM}@random", "upos") + 0.2
    flash = pl.read_parquet(out / "flash.parquet")
    assert flash["k"].to_list() == [2] and flash["n_models"].item() == 3


@pytest.mark.slow
def test_every_model_family_in_one_run(tmp_path, sentencepiece_tokenizer, smollm2_dir):
    t5 = load_subject(random_t5(sentencepiece_tokenizer), tokenizer=sentencepiece_tokenizer)
    smollm2 = load_subject(str(smollm2_dir))
    assert (t5.kind, smollm2.kind) == ("encoder-decoder", "decoder")
    quick = with_probe(
        HolmesConfig(layers="0,-1", limits=Limits(blimp_pairs=30)),
        seeds=(0,),
        control=False,
        mdl=False,
        epochs=2,
        lr=1e-2,
    )
    board = run_holmes(
        [t5, smollm2, "glove:6B.50d"],
        ["blimp-causative"],
        tmp_path,
        config=quick,
        data="samples",
        progress=False,
    )
    sites = {m: sorted(board.filter(pl.col("model") == m)["site"]) for m in board["model"]}
    assert sites[t5.name] == ["encoder.0", "encoder.2"]
    assert sites[smollm2.name] == ["decoder.0", "decoder.30"]
    assert sites["glove:6B.50d"] == ["static.0"]
    ranked = board.filter("ranked")
    assert sorted(ranked["site"]) == ["decoder.30", "encoder.2", "static.0"]
    assert board["control"].is_null().all() and board["compression"].is_null().all()
    assert (tmp_path / "layers.png").exists()


def test_model_entries():
    entry = model_entry("minilm@random")
    assert (entry.label, entry.name, entry.init) == (f"{MINILM}@random", MINILM, "random")
    assert model_entry("glove:6B.50d").label == "glove:6B.50d"
    with pytest.raises(ValueError, match="appear twice"):
        holmes_run.model_entries(["minilm", MINILM])
    assert HolmesConfig(flash=True).fractions[-1] == 1 / 512
    assert HolmesConfig(grid=ProbeGrid(train_fractions=(0.5,))).fractions == (1.0, 0.5)
