"""Zero-shot and fine-tuning through a random-init BERT sequence classifier (offline)."""

from __future__ import annotations

import pytest
import torch
from transformers import BertForSequenceClassification

from suites.curriculum import (
    THREE_WAY,
    TWO_WAY,
    CurriculumConfig,
    FineTuneConfig,
    LabelMappingError,
    fine_tune,
    finetune_inoculation,
    load_phenomena,
    model_labels,
    nli_probabilities,
    zero_shot,
)
from suites.suite import with_probe
from tests.tiny_models import random_bert

ORDER = THREE_WAY  # the random model's classes, named in the benchmark's order


@pytest.fixture(scope="module")
def random_nli(minilm_tokenizer):
    return random_bert(minilm_tokenizer, head="classification", num_labels=3)


@pytest.fixture(scope="module")
def small_tasks():
    tasks = load_phenomena(["boolean", "syntactic_alternation"], "samples")
    return {
        name: task.subsample({"train": 48, "test": 600}, seed=0) for name, task in tasks.items()
    }


def test_zero_shot_random_model_has_mcc_near_zero(random_nli, minilm_tokenizer, small_tasks):
    with pytest.raises(LabelMappingError, match="label order explicitly"):
        zero_shot(random_nli, small_tasks, tokenizer=minilm_tokenizer, progress=False)
    table = zero_shot(
        random_nli, small_tasks, tokenizer=minilm_tokenizer, label_order=ORDER, progress=False
    )
    assert table["phenomenon"].to_list() == ["boolean", "syntactic_alternation"]
    assert table["n_items"].to_list() == [600, 600]
    assert table["label_scheme"].to_list() == ["3-way", "2-way"]
    assert table["mcc"].abs().max() < 0.15  # chance: |MCC| ~ 1/sqrt(600) = 0.04
    # the 2-way row is the 3-way argmax collapsed: entailment -> entailed, else not-entailed
    alt = small_tasks["syntactic_alternation"].split("test")
    probs = nli_probabilities(
        random_nli,
        minilm_tokenizer,
        alt["text"].to_list(),
        alt["text_pair"].to_list(),
        progress=False,
    )
    pred = torch.where(probs.argmax(-1) == 0, 0, 1)
    gold = torch.tensor([TWO_WAY.index(x) for x in alt["label"].to_list()])
    assert table["accuracy"][1] == pytest.approx(float((pred == gold).double().mean()))


def test_fine_tuning_steps_reduce_the_loss(random_nli, minilm_tokenizer, small_tasks):
    with torch.random.fork_rng():  # the init is overwritten by the state dict below
        model = BertForSequenceClassification(random_nli.config)
    model.load_state_dict(random_nli.state_dict())
    labels = model_labels(None, ORDER)
    config = FineTuneConfig(lr=1e-3, epochs=4, batch_size=8)
    for name in ("boolean", "syntactic_alternation"):  # 3-way head, 3-way and collapsed 2-way
        losses = fine_tune(
            model,
            minilm_tokenizer,
            small_tasks[name],
            labels,
            config=config,
            seed=0,
            progress=False,
        )
        assert len(losses) == 4 * 6
        assert sum(losses[-6:]) / 6 < sum(losses[:6]) / 6


def test_finetune_inoculation_restores_the_weights(random_nli, minilm_tokenizer, small_tasks):
    before = {k: v.clone() for k, v in random_nli.state_dict().items()}
    task = small_tasks["syntactic_alternation"].subsample({"test": 40}, seed=0)
    table = finetune_inoculation(
        random_nli,
        minilm_tokenizer,
        task,
        model_labels(None, ORDER),
        with_probe(CurriculumConfig(sizes=(4,)), seeds=(0, 1)),
        FineTuneConfig(epochs=1),
        progress=False,
    )
    assert table.height == 4 and set(table["metric"]) == {"accuracy", "mcc"}
    assert table["n_train"].to_list() == [8] * 4
    assert all(torch.equal(before[k], v) for k, v in random_nli.state_dict().items())
