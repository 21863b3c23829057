"""Memory budgets that are not sizes, and budgets a fit from a FeatureSet cannot work under."""

from __future__ import annotations

import torch

from lingprobe.feature_set import FeatureSet
from probes import (
    ProbeConfigError,
    ProbeGrid,
    TrainConfig,
    fit_logistic_regression,
    fit_probes,
    random_splits,
)
from probes.structural import SentenceTrees, StructuralConfig, fit_structural_probes
from tests.bad_inputs.case import Case, Env

N, DIM = 120, 6


def written(env: Env) -> FeatureSet:
    """A FeatureSet of 120 items x 2 sites x 6 floats (2,880 bytes per site as float32)."""
    feats = torch.randn(N, 2, DIM, generator=torch.Generator().manual_seed(0))
    return FeatureSet.write(env.tmp() / "fs", [feats], ["layer.0", "layer.1"], shard_size=32)


def labels() -> torch.Tensor:
    return torch.arange(N) % 3


def stream_too_small(env: Env) -> None:
    config = TrainConfig(epochs=1, batch_size=16, memory=1000)
    fit_probes(
        written(env), labels(), random_splits(N), ProbeGrid(seeds=[0]), config, progress=False
    )


def logistic_too_small(env: Env) -> None:
    fit_logistic_regression(written(env), torch.stack([labels()] * 2), memory="2KB")


def structural_too_small(env: Env) -> None:
    """Four sentences of three words (a chain), 12 words x 6 floats: 288 bytes per site."""
    heads, punct = torch.tensor([0, 1, 2] * 4), torch.zeros(12, dtype=torch.bool)
    trees = SentenceTrees(torch.full((4,), 3), heads, punct)
    feats = torch.randn(12, 2, DIM, generator=torch.Generator().manual_seed(0))
    features = FeatureSet.write(env.tmp() / "fs", [feats], ["layer.0", "layer.1"])
    config = StructuralConfig(epochs=1, memory=200)
    fit_structural_probes(features, trees, torch.tensor([0, 1, 2, 0]), config=config)


MEMORY = [
    Case(
        "train-config-memory-unit",
        "TrainConfig(memory='4XB')",
        "ProbeConfigError: names TrainConfig.memory, the units and an example",
        lambda env: TrainConfig(memory="4XB"),
        ProbeConfigError,
        r"TrainConfig\.memory='4XB': needs None \(no bound\), a number of bytes >= 1, or a size"
        r" such as '4GiB' \(units B, KB.*e\.g\. memory='4GiB'",
    ),
    Case(
        "train-config-memory-zero",
        "TrainConfig(memory=0)",
        "ProbeConfigError: names TrainConfig.memory and an example",
        lambda env: TrainConfig(memory=0),
        ProbeConfigError,
        r"TrainConfig\.memory=0: needs None \(no bound\), a number of bytes >= 1",
    ),
    Case(
        "train-config-memory-float",
        "TrainConfig(memory=1.5)",
        "ProbeConfigError: names TrainConfig.memory and an example",
        lambda env: TrainConfig(memory=1.5),  # type: ignore[arg-type]
        ProbeConfigError,
        r"TrainConfig\.memory=1\.5: needs None \(no bound\)",
        typed=True,
    ),
    Case(
        "fit-probes-memory-too-small-to-stream",
        "fit_probes(FeatureSet, ..., TrainConfig(memory=1000)): not two parts of one site's rows",
        "ProbeConfigError: the bytes the dev rows and two parts need, and the fix",
        stream_too_small,
        ProbeConfigError,
        r"TrainConfig\.memory=1000 B is too small to stream this grid: .* give memory >= \d+"
        r" bytes",
    ),
    Case(
        "logistic-memory-below-one-site",
        "fit_logistic_regression(FeatureSet, y, memory='2KB'): one site needs 2,880 bytes",
        "ProbeConfigError: one site's bytes and the memory to give",
        logistic_too_small,
        ProbeConfigError,
        r"fit_logistic_regression: memory='2KB' \(1\.95 KiB\) is less than one site's features"
        r" \(2\.81 KiB, 120 items x 6 floats\).*give memory of at least 2\.81 KiB",
    ),
    Case(
        "structural-config-memory-unit",
        "StructuralConfig(memory='4XB')",
        "ProbeConfigError: names StructuralConfig.memory, the units and an example",
        lambda env: StructuralConfig(memory="4XB"),
        ProbeConfigError,
        r"StructuralConfig\.memory='4XB': needs None \(no bound\), a number of bytes >= 1, or a"
        r" size such as '4GiB' \(units B, KB.*e\.g\. memory='4GiB'",
    ),
    Case(
        "structural-memory-below-one-site",
        "fit_structural_probes(FeatureSet, ..., StructuralConfig(memory=200)): one site needs 288"
        " bytes",
        "ProbeConfigError: one site's bytes and the memory to give",
        structural_too_small,
        ProbeConfigError,
        r"StructuralConfig\.memory=200 \(200 B\) is less than one site's features \(288 B, 12"
        r" words x 6 floats\).*give memory >= 288 bytes",
    ),
]
