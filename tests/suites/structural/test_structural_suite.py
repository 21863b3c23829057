"""The structural suite end to end on a small generated treebank and tiny random models:
CoNLL-U to word items and trees, every layer of a subject and its random twin, the baseline
rows, the plots and parquet, and the amnesic LM-loss table."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import torch

from internals import Site, load_subject
from probes.structural import StructuralConfig
from suites.cli import main
from suites.schema import RESULTS_SCHEMA
from suites.structural import (
    StructuralSuiteConfig,
    best_layers,
    read_treebank,
    run_structural,
    write_structural,
)
from suites.structural.amnesic import run_amnesic, upos_ids
from suites.sweep.errors import SweepConfigError
from suites.sweep.parse import parse_config
from tests.probes.structural_data import random_heads
from tests.tiny_models import random_bert, random_llama

WORDS = ["the", "dog", "saw", "a", "cat", "near", "old", "trees", "and", "ran", "home", "fast"]
UPOS = ["DET", "NOUN", "VERB", "DET", "NOUN", "ADP", "ADJ", "NOUN", "CCONJ", "VERB", "ADV", "ADV"]


def write_conllu(path: Path, n: int, seed: int) -> Path:
    """`n` sentences of 4..9 words plus a final '.', random trees, the '.' attached to the root;
    the second sentence spells a multi-word token ("can't" = "ca" + "n't")."""
    gen = torch.Generator().manual_seed(seed)
    blocks = []
    for s in range(n):
        size = int(torch.randint(4, 10, (1,), generator=gen))
        picks = torch.randint(0, len(WORDS), (size,), generator=gen).tolist()
        forms = [WORDS[p] for p in picks]
        tags = [UPOS[p] for p in picks]
        heads = random_heads(size, gen)
        lines = [f"# text = {' '.join(forms)} ."]
        if s == 1:
            forms[0], tags[0] = "ca", "AUX"
            forms.insert(1, "n't")
            tags.insert(1, "PART")
            heads = [h + (h > 1) for h in heads]
            heads.insert(1, 1)
            lines = [
                f"# text = can't {' '.join(forms[2:])} .",
                "1-2\tcan't\t_\t_\t_\t_\t_\t_\t_\t_",
            ]
        root = heads.index(0) + 1
        for i, (form, tag, head) in enumerate(zip(forms, tags, heads), start=1):
            lines.append(f"{i}\t{form}\t{form}\t{tag}\tXX\t_\t{head}\tdep\t_\t_")
        lines.append(f"{len(forms) + 1}\t.\t.\tPUNCT\t.\t_\t{root}\tpunct\t_\t_")
        blocks.append("\n".join(lines))
    path.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def banks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ud")
    train_file = write_conllu(folder / "toy-train.conllu", 40, 0)
    test_file = write_conllu(folder / "toy-dev.conllu", 12, 1)
    return (
        read_treebank(train_file, limit_sentences=30),
        read_treebank(train_file, skip_sentences=30),
        read_treebank(test_file),
    )


def test_read_treebank_builds_word_items_and_trees(banks) -> None:
    train, dev, test = banks
    assert (len(train), len(dev), len(test)) == (30, 10, 12)
    assert len(train.items) == int(train.trees.lengths.sum()) == len(train.upos)
    word = train.items[1]  # sentence 0, word 2
    assert word.text == train.sentences[0].text
    start, end = word.spans[0]
    assert word.text[start:end] == train.sentences[0].words[1].form
    mwt = train.sentences[1]
    assert [w.form for w in mwt.words[:2]] == ["ca", "n't"]
    assert bool(train.trees.punct[int(train.trees.lengths[0]) - 1])  # the final "."
    assert int(train.trees.punct.sum()) == len(train)
    concept, labels = upos_ids(train)
    assert labels[int(concept[0])] == train.upos[0]


def test_run_structural_on_a_model_and_its_random_twin(banks, minilm_tokenizer, tmp_path) -> None:
    train, dev, test = banks
    model = random_bert(minilm_tokenizer, layers=2, width=32)
    subjects = [
        load_subject(model, tokenizer=minilm_tokenizer),
        load_subject(model, tokenizer=minilm_tokenizer, init="random", seed=1),
    ]
    config = StructuralSuiteConfig(
        seeds=(0, 1), ranks=(None, 4), structural=StructuralConfig(epochs=2)
    )
    frame = run_structural(subjects, train, dev, test, config=config, dataset="toy", progress=False)
    assert frame.columns == list(RESULTS_SCHEMA)
    probed = frame.filter(pl.col("model") != "right_branching")
    # 2 subjects x 3 sites x 2 seeds x 2 ranks x 2 splits x 2 metrics per kind
    assert probed.height == 2 * 3 * 2 * 2 * 2 * 2 * 2
    assert set(probed["init"]) == {"pretrained", "random"}
    assert set(probed["site"]) == {"encoder.0", "encoder.1", "encoder.2"}
    assert set(probed["variant"]) == {"task", "rank:4"}
    assert set(frame["task"]) == {"toy:distance", "toy:depth"}
    assert set(frame["suite"]) == {"structural"}
    base = frame.filter(model="right_branching")
    assert sorted(base.filter(split="test")["metric"].to_list()) == [
        "dspr",
        "nspr",
        "root_acc",
        "uuas",
    ]
    assert base["layer"].null_count() == base["site"].null_count() == base.height
    assert frame["value"].is_finite().all()
    paths = write_structural(frame, tmp_path)
    assert {p.name for p in paths} >= {
        "structural.parquet",
        "uuas_by_layer.png",
        "dspr_by_layer.png",
    }
    assert pl.read_parquet(tmp_path / "structural.parquet").equals(frame)
    best = best_layers(frame)
    assert set(best["model"]) == {subjects[0].name, "right_branching"}
    assert {"uuas", "dspr", "root_acc", "nspr"} <= set(best.columns)


def test_run_amnesic_erases_upos_against_a_random_control(banks, bpe_tokenizer) -> None:
    train, _, test = banks
    subject = load_subject(random_llama(bpe_tokenizer, layers=2), tokenizer=bpe_tokenizer)
    sites = [Site("decoder", 1), Site("decoder", 2)]
    table = run_amnesic(subject, train, test.texts[:4], sites, progress=False)
    assert table.height == 4
    assert set(table["eraser"]) == {"leace", "random"}
    for site in ("decoder.1", "decoder.2"):
        ranks = table.filter(site_name=site)["rank"].to_list()
        assert ranks[0] == ranks[1] > 0
    assert table["delta"].is_finite().all()
    assert (table["delta"].abs() > 0).all()


def test_cli_runs_the_suite_and_report_renders_it(tmp_path, capsys) -> None:
    train_file = write_conllu(tmp_path / "toy-train.conllu", 14, 2)
    test_file = write_conllu(tmp_path / "toy-dev.conllu", 5, 3)
    out = tmp_path / "out"
    files = ["--train-file", str(train_file), "--test-file", str(test_file)]
    sizes = ["--train-sentences", "10", "--dev-sentences", "4", "--epochs", "1"]
    common = ["--models", "minilm", "--init", "pretrained,random", "--layers", "0,3"]
    common += ["--out", str(out), "--quiet"]
    assert main(["run", "structural", *files, *sizes, *common]) == 0
    frame = pl.read_parquet(out / "results.parquet")
    assert frame.columns == list(RESULTS_SCHEMA)
    assert set(frame["site"].drop_nulls()) == {"encoder.0", "encoder.3"}
    assert set(frame["init"]) == {"pretrained", "random", "baseline"}
    summary = out / "structural"
    assert (summary / "uuas_by_layer.png").exists() and (out / "manifest.json").exists()
    (summary / "uuas_by_layer.png").unlink()
    assert main(["report", str(out)]) == 0
    assert (summary / "uuas_by_layer.png").exists()
    unit = next((out / "units").iterdir())
    assert (unit / "structural.parquet").exists()
    assert main(["report", str(unit)]) == 0
    assert "right_branching" in capsys.readouterr().out


def test_cli_refuses_a_bad_setting_in_one_line(tmp_path, capsys) -> None:
    code = main(["run", "structural", "--kinds", "width", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "kinds" in err[0]
    assert not (tmp_path / "o").exists()


def sweep_with_memory(memory: str) -> dict:
    """A sweep of the structural suite with `[probe] memory`, as parsed from its TOML."""
    return {
        "sweep": {"out": "out", "data": "samples"},
        "models": [{"name": "minilm"}],
        "suites": [{"suite": "structural"}],
        "probe": {"memory": memory},
    }


def test_a_sweep_memory_budget_reaches_the_structural_probes(tmp_path) -> None:
    config = parse_config(sweep_with_memory("4GiB"), base=tmp_path)
    assert config.suites[0].config.structural.memory_bytes == 4 << 30
    with pytest.raises(SweepConfigError, match=r"StructuralConfig\.memory='4XB': needs None"):
        parse_config(sweep_with_memory("4XB"), base=tmp_path)
