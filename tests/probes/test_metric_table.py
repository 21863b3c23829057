"""The metric table: every item-sum metric equals its reference (sklearn, scipy) for each
target kind it scores, on the heads' path and on the bootstrap's sums; and the heads, item
sums, `select_by`, dev selection, the rank and structural metrics read the table."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import pearsonr
from sklearn.metrics import (
    accuracy_score,
    f1_score,
    matthews_corrcoef,
    mean_squared_error,
)

from probes import ProbeGrid, TrainConfig, fit_probes
from probes.errors import ProbeConfigError
from probes.heads import make_head
from probes.item_sums import item_sums
from probes.metric_table import (
    HEADS,
    METRICS,
    Metric,
    metric,
    metric_names,
    select_choices,
)
from probes.rank_metrics import RANK_METRICS, rank_metrics
from probes.stats import ItemResamples, bootstrap_probes
from probes.structural._metrics import METRICS as STRUCTURAL

# (metric, target kind) -> its reference on one probe's (truth, prediction) numpy arrays.
# A new item-sum metric adds its entry here (test_every_item_sum_metric_has_a_reference).
REFERENCES = {
    ("accuracy", "classification"): accuracy_score,
    ("macro_f1", "classification"): lambda t, p: f1_score(t, p, average="macro"),
    ("micro_f1", "classification"): lambda t, p: f1_score(t, p, average="micro"),
    ("mcc", "classification"): matthews_corrcoef,
    ("accuracy", "multilabel"): accuracy_score,  # subset accuracy on indicator rows
    ("macro_f1", "multilabel"): lambda t, p: f1_score(t, p, average="macro", zero_division=0),
    ("micro_f1", "multilabel"): lambda t, p: f1_score(t, p, average="micro", zero_division=0),
    ("pearson", "regression"): lambda t, p: pearsonr(t, p)[0],
    ("mse", "regression"): mean_squared_error,
}


def problems(kind: str) -> tuple[torch.Tensor, torch.Tensor, int]:
    """(predictions, truth, outputs) of four probes on 60 items."""
    gen = torch.Generator().manual_seed(7)
    if kind == "classification":
        truth = torch.randint(0, 4, (4, 60), generator=gen)
        noise = torch.randint(0, 4, (4, 60), generator=gen)
        keep = torch.rand(4, 60, generator=gen) < 0.5
        return torch.where(keep, truth, noise), truth, 4
    if kind == "multilabel":
        truth = torch.rand(4, 60, 5, generator=gen) < 0.4
        flip = torch.rand(4, 60, 5, generator=gen) < 0.2
        return truth ^ flip, truth, 5
    truth = torch.randn(4, 60, generator=gen, dtype=torch.float64)
    return truth + torch.randn(4, 60, generator=gen, dtype=torch.float64), truth, 1


def test_every_item_sum_metric_has_a_reference() -> None:
    table = {(m, kind) for kind in HEADS for m in metric_names("item_sums", kind)}
    assert table == set(REFERENCES)


@pytest.mark.parametrize("kind", HEADS)
def test_head_and_bootstrap_metrics_equal_the_references(kind: str) -> None:
    pred, truth, outputs = problems(kind)
    head = make_head(kind, outputs)
    assert head.metric_names == item_sums(kind, outputs).metric_names
    got = head.metrics(pred, truth, None)
    reps = bootstrap_probes(pred, truth, ItemResamples(60, 10, 0), head=kind, outputs=outputs)
    assert set(got) == set(reps) == set(head.metric_names)
    for name in head.metric_names:
        reference = REFERENCES[(name, kind)]
        want = [reference(truth[p].numpy(), pred[p].numpy()) for p in range(pred.shape[0])]
        np.testing.assert_allclose(got[name].numpy(), want, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(reps[name].point.numpy(), want, atol=1e-12, err_msg=name)


def test_the_rank_and_structural_metrics_are_the_tables() -> None:
    assert RANK_METRICS == metric_names("ranks") == ("auroc", "recall_at_fpr")
    gen = torch.Generator().manual_seed(1)
    log_probs = torch.randn(2, 30, 3, generator=gen).log_softmax(-1)
    truth = torch.randint(0, 3, (2, 30), generator=gen)
    assert set(rank_metrics(log_probs, truth)) == set(RANK_METRICS)
    for kind, names in STRUCTURAL.items():
        assert names == metric_names("sentences", kind)
    assert STRUCTURAL["distance"] == ("uuas", "dspr")  # (tree metric, Spearman) order


def test_select_by_takes_every_item_sum_metric_and_the_loss() -> None:
    assert select_choices() == (None, "loss", *metric_names("item_sums"))
    assert "mse" in select_choices() and "auroc" not in select_choices()
    assert TrainConfig(select_by="mse").select_by == "mse"
    with pytest.raises(ProbeConfigError, match="select_by='auroc'"):
        TrainConfig(select_by="auroc")


def test_lower_better_metrics_are_minimised_on_dev() -> None:
    """Dev mse is the regression head's loss: selecting by either picks the same epochs (a
    maximised mse would pick the worst)."""
    gen = torch.Generator().manual_seed(0)
    feats = torch.randn(300, 2, 6, generator=gen)
    value = feats[:, 1, 0] - feats[:, 1, 1] + 0.3 * torch.randn(300, generator=gen)
    splits = torch.tensor([0] * 200 + [1] * 50 + [2] * 50)
    config = TrainConfig(epochs=8, batch_size=16, lr=3e-2)
    grid = ProbeGrid(seeds=(0, 1))
    picked = {}
    for select_by in ("loss", "mse"):
        chosen = TrainConfig(**{**vars(config), "select_by": select_by})
        res = fit_probes(feats, value, splits, grid, chosen, progress=False)
        picked[select_by] = res.probes.sort("probe")["best_epoch"].to_list()
    assert picked["mse"] == picked["loss"]
    assert metric("mse").higher_is_better is False and metric("loss").higher_is_better is False


def test_a_record_states_its_formulas_for_its_targets() -> None:
    assert all(m.name == name for name, m in METRICS.items())
    with pytest.raises(ProbeConfigError, match="one formula per target"):
        Metric("bad", "bad", True, "item_sums", ("classification",), {})
    with pytest.raises(ProbeConfigError, match="targets"):
        Metric("bad", "bad", True, "ranks", ())  # scores nothing
    with pytest.raises(ProbeConfigError, match="give one of"):
        metric("f1")
