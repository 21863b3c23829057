"""The heads' predictions."""

from __future__ import annotations

import torch

from probes.heads import make_head


def test_classification_predicts_the_first_maximum_as_argmax_does() -> None:
    gen = torch.Generator().manual_seed(0)
    logits = torch.randint(0, 3, (4000, 17), generator=gen).float()  # many ties
    logits[::7, 5] = torch.nan  # a NaN counts as the maximum
    logits[::11, 2] = torch.inf
    predicted = make_head("classification", 17).predict(logits)
    assert torch.equal(predicted, torch.argmax(logits, dim=-1))
    assert predicted[0] == 5 and predicted[7] == 5
