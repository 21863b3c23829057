"""Rank metrics in the bootstrap, the fitted results' tables and their intervals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.metrics import roc_auc_score

from probes import ProbeGrid, ProbeResults, TrainConfig, fit_probes, random_splits
from probes._grid.resampling import ItemResamples
from probes.intervals import seed_mean_intervals
from probes.rank_bootstrap import bootstrap_rank_metrics
from probes.rank_metrics import rank_metrics
from tests.probes.conftest import make_synthetic


@pytest.mark.parametrize("k", [2, 4])
def test_replicates_match_sklearn_on_the_resampled_items(k: int) -> None:
    gen = torch.Generator().manual_seed(k)
    w = torch.randint(1, 4, (3, 50, k), generator=gen).double()
    probs = w / w.sum(-1, keepdim=True)
    truth = torch.randint(0, k, (3, 50), generator=gen)
    idx = torch.randint(0, 50, (6, 50), generator=gen)
    reps = bootstrap_rank_metrics(probs.log(), truth, ItemResamples.from_indices(idx))
    for p in range(3):
        for b in range(6):
            y, s = truth[p, idx[b]].numpy(), probs[p, idx[b]].numpy()
            if k == 2:
                ref = roc_auc_score(y, s[:, 1])
            else:
                present = np.unique(y)  # a resample may lose a class: macro over the others
                ref = np.mean([roc_auc_score(y == c, s[:, c]) for c in present])
                if len(present) == k:
                    assert ref == pytest.approx(
                        roc_auc_score(y, s, multi_class="ovr", average="macro")
                    )
            assert reps["auroc"].boot[p, b].item() == pytest.approx(ref, abs=1e-12)
        # leave-one-out values equal the metrics of the items without that one
        for i in (0, 17):
            keep = torch.arange(50) != i
            alone = rank_metrics(probs[p : p + 1, keep].log(), truth[p : p + 1, keep])
            for m in ("auroc", "recall_at_fpr"):
                assert reps[m].jack[p, i].item() == pytest.approx(alone[m].item(), nan_ok=True)


def test_fitted_results_report_auroc_with_intervals(tmp_path: Path) -> None:
    data = make_synthetic(n=240, sites=2)
    splits = random_splits(240, seed=1)
    res = fit_probes(
        data.feats,
        data.labels,
        splits,
        ProbeGrid(seeds=[0, 1]),
        TrainConfig(epochs=3, batch_size=16),
        progress=False,
    )
    table = res.table().filter(split="test", metric="auroc")
    assert table.height == res.probes.height
    test = splits.test.nonzero().flatten()
    probs = torch.softmax(res.logits(data.feats).double(), -1)[:, test]
    y = data.labels[test].numpy()
    probes = res.probes.rename({"site": "site_index"})  # the probe frame's `site` is the index
    for row in table.join(probes, on=["site_index", "seed"]).iter_rows(named=True):
        ref = roc_auc_score(y, probs[row["probe"]].numpy(), multi_class="ovr", average="macro")
        assert row["value"] == pytest.approx(ref, abs=1e-5)
    assert res.table().filter(metric="auroc", split="train").height == 0
    summary = res.summary(ci=0.9, n_resamples=200).filter(metric="auroc")
    assert summary.height == 2
    assert (summary["ci_low"] <= summary["mean"]).all()
    assert (summary["mean"] <= summary["ci_high"]).all()
    alone = seed_mean_intervals(res.probes, res.test, ci=0.9, n_resamples=200, metrics=["auroc"])
    assert alone["metric"].unique().to_list() == ["auroc"]
    alone = alone.rename({"site": "site_index"})
    both = summary.join(alone, on=["site_index", "variant", "mask", "metric"])
    assert (both["ci_low"] == both["ci_low_right"]).all()
    res.save(tmp_path / "r")
    loaded = ProbeResults.load(tmp_path / "r")
    assert loaded.test is not None and res.test is not None
    assert loaded.test.scores is not None and res.test.scores is not None
    assert torch.equal(loaded.test.scores, res.test.scores)
