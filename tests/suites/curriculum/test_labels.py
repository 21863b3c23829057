"""Model label order, the 3-way -> 2-way collapse, and MCC against sklearn."""

from __future__ import annotations

import pytest
import torch
from sklearn.metrics import matthews_corrcoef

from suites.curriculum import THREE_WAY, TWO_WAY, LabelMappingError, matthews, model_labels


def test_names_from_id2label_and_explicit_order():
    mnli = model_labels({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"})
    assert mnli.names == ("contradiction", "neutral", "entailment")
    assert model_labels(None, ["Entailment", "neutral", "Contradiction"]).names == THREE_WAY
    assert model_labels(None, {1: "not_entailment", 0: "entailment"}).names == (
        "entailed",
        "not-entailed",
    )
    with pytest.raises(LabelMappingError, match="label order explicitly"):
        model_labels({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(LabelMappingError, match="permutation"):
        model_labels(None, ["entailment", "neutral"])


def test_three_way_collapses_to_two_way():
    mnli = model_labels({0: "contradiction", 1: "neutral", 2: "entailment"})
    classes = torch.tensor([0, 1, 2, 2, 0])
    # entailment -> entailed (0); neutral and contradiction -> not-entailed (1)
    assert mnli.to_task(classes, TWO_WAY).tolist() == [1, 1, 0, 0, 1]
    assert mnli.to_task(classes, THREE_WAY).tolist() == [2, 1, 0, 0, 2]
    probs = torch.tensor([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    two = mnli.task_probabilities(probs, TWO_WAY)
    assert torch.allclose(two, torch.tensor([[0.5, 0.5], [0.3, 0.7]]))
    three = mnli.task_probabilities(probs, THREE_WAY)
    assert torch.allclose(three, torch.tensor([[0.5, 0.3, 0.2], [0.3, 0.1, 0.6]]))
    binary = model_labels(None, TWO_WAY)
    assert not binary.can_predict(THREE_WAY)
    with pytest.raises(LabelMappingError, match="cannot predict"):
        binary.to_task(torch.tensor([0]), THREE_WAY)


@pytest.mark.parametrize("k", [2, 3])
def test_mcc_equals_sklearn(k):
    gen = torch.Generator().manual_seed(k)
    for trial in range(5):
        true = torch.randint(0, k, (200,), generator=gen)
        noisy = torch.randint(0, k, (200,), generator=gen)
        pred = torch.where(torch.rand(200, generator=gen) < 0.2 * trial, true, noisy)
        assert matthews(pred, true, k) == pytest.approx(matthews_corrcoef(true, pred), abs=1e-12)
    constant = torch.zeros(50, dtype=torch.int64)
    true = torch.randint(0, k, (50,), generator=gen)
    assert matthews(constant, true, k) == matthews_corrcoef(true, constant) == 0.0
