"""Probe settings and inputs that would train garbage, and damaged result folders."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch

from lingprobe.errors import DeviceError
from probes import (
    MDLBlocks,
    ProbeConfigError,
    ProbeGrid,
    ProbeInputError,
    ProbeResults,
    TrainConfig,
    directions,
    fit_logistic_regression,
    fit_probes,
    random_splits,
)
from probes.errors import EmptySplitWarning, ProbeDivergedWarning, ResultsDamagedError
from tests.bad_inputs.case import Case, Env

FAST = TrainConfig(epochs=2, batch_size=16)
ONE = ProbeGrid(seeds=[0])


def data(n: int = 120) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 3, (n,), generator=gen)
    feats = torch.randn(n, 2, 6, generator=gen) + labels[:, None, None].float()
    return feats, labels


def fit(targets=None, splits=None, **options):
    feats, labels = data()
    options.setdefault("grid", ONE)
    options.setdefault("config", FAST)
    return fit_probes(
        feats,
        labels if targets is None else targets,
        random_splits(len(feats)) if splits is None else splits,
        progress=False,
        **options,
    )


def config_case(id: str, field: str, value, match: str, typed: bool = False) -> Case:
    return Case(
        f"train-config-{id}",
        f"TrainConfig({field}={value!r})",
        f"ProbeConfigError: names TrainConfig.{field} and an example",
        lambda env: TrainConfig(**{field: value}),
        ProbeConfigError,
        match,
        typed=typed,
    )


def grid_case(id: str, field: str, value, match: str, typed: bool = False) -> Case:
    return Case(
        f"grid-{id}",
        f"ProbeGrid({field}={value!r})",
        f"ProbeConfigError: names ProbeGrid.{field}",
        lambda env: ProbeGrid(**{field: value}),
        ProbeConfigError,
        match,
        typed=typed,
    )


def diverging(env: Env) -> None:
    feats, labels = data()
    feats[:, 1] = feats[:, 1].sign() * 3e38  # near float32's limit: the logits overflow
    result = fit_probes(
        feats,
        labels,
        random_splits(len(feats)),
        ONE,
        TrainConfig(epochs=3, batch_size=16, lr=0.5),
        progress=False,
    )
    diverged = result.probes.filter(site=1)["diverged_epoch"].to_list()
    assert diverged[0] is not None, "the diverged probe is not reported"
    values = result.table().filter(site_index=1)["value"].to_list()
    assert all(math.isnan(v) for v in values), "a diverged probe was scored"
    assert result.probes.filter(site=0)["diverged_epoch"].to_list() == [None]


def no_test_items(env: Env) -> None:
    codes = np.zeros(120, dtype=np.int64)
    codes[100:] = 1
    result = fit(splits=codes)
    values = result.table().filter(split="test")["value"].to_list()
    assert values and all(math.isnan(v) for v in values)


def saved(env: Env):
    folder = env.tmp()
    fit().save(folder)
    return folder


def flip_weights(env: Env) -> None:
    folder = saved(env)
    path = folder / "weights.safetensors"
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0x01
    path.write_bytes(bytes(raw))
    ProbeResults.load(folder)


def drop_manifest(env: Env) -> None:
    folder = saved(env)
    (folder / "manifest.json").unlink()
    ProbeResults.load(folder)


def swap_in_old_file(env: Env) -> None:
    folder, other = saved(env), env.tmp()
    fit(grid=ProbeGrid(seeds=[1])).save(other)
    (folder / "metrics.parquet").write_bytes((other / "metrics.parquet").read_bytes())
    ProbeResults.load(folder)


PROBES = [
    config_case(
        "lr-inf",
        "lr",
        math.inf,
        r"TrainConfig\.lr=inf: needs a finite number > 0; "
        r"e\.g\. lr=5e-4",
    ),
    config_case("lr-nan", "lr", math.nan, r"TrainConfig\.lr=nan: needs a finite number > 0"),
    config_case("lr-zero", "lr", 0.0, r"TrainConfig\.lr=0\.0: needs a finite number > 0"),
    config_case("weight-decay-inf", "weight_decay", math.inf, r"TrainConfig\.weight_decay=inf"),
    config_case("eps-nan", "eps", math.nan, r"TrainConfig\.eps=nan"),
    config_case(
        "betas-nan",
        "betas",
        (0.9, math.nan),
        r"TrainConfig\.betas=\(0\.9, nan\): "
        r"needs two numbers in \[0, 1\)",
    ),
    config_case("dropout-one", "dropout", 1.0, r"TrainConfig\.dropout=1\.0: needs a number in"),
    config_case("warmup-negative", "warmup", -0.1, r"TrainConfig\.warmup=-0\.1"),
    config_case("epochs-zero", "epochs", 0, r"TrainConfig\.epochs=0: needs an integer >= 1"),
    config_case(
        "select-unknown",
        "select_by",
        "f1",
        r"TrainConfig\.select_by='f1': needs one"
        r" of None, 'loss'",
    ),
    config_case(
        "epochs-float", "epochs", 2.5, r"TrainConfig\.epochs=2\.5: needs an integer", typed=True
    ),
    config_case(
        "lr-string", "lr", "5e-4", r"TrainConfig\.lr='5e-4': needs a finite number", typed=True
    ),
    config_case("epochs-bool", "epochs", True, r"TrainConfig\.epochs=True", typed=True),
    Case(
        "train-config-replace-inf",
        "dataclasses.replace(TrainConfig(), lr=inf) (how sweep and CLI overrides arrive)",
        "ProbeConfigError: TrainConfig.lr=inf",
        lambda env: dataclasses.replace(TrainConfig(), lr=math.inf),
        ProbeConfigError,
        r"TrainConfig\.lr=inf",
    ),
    grid_case("seeds-repeated", "seeds", [0, 0], r"ProbeGrid\.seeds=\[0, 0\]: needs distinct"),
    grid_case(
        "seeds-negative",
        "seeds",
        [-1],
        r"ProbeGrid\.seeds=\[-1\]: needs distinct "
        r"integers >= 0",
    ),
    grid_case("seeds-empty", "seeds", [], r"ProbeGrid\.seeds=\[\]"),
    grid_case("fraction-nan", "train_fractions", [math.nan], r"ProbeGrid\.train_fractions"),
    grid_case("fraction-zero", "train_fractions", [0.0], r"in \(0, 1\]"),
    grid_case("hidden-zero", "hidden", 0, r"ProbeGrid\.hidden=0: needs an integer >= 1"),
    grid_case(
        "kind-unknown",
        "kind",
        "rnn",
        r"ProbeGrid\.kind='rnn': needs one of 'linear', "
        r"'mlp'",
        typed=True,
    ),
    grid_case("sites-float", "sites", [1.5], r"ProbeGrid\.sites=\[1\.5\]", typed=True),
    grid_case("seeds-float", "seeds", [0.5], r"ProbeGrid\.seeds=\[0\.5\]", typed=True),
    Case(
        "grid-no-variant",
        "ProbeGrid(task=False, control=False)",
        "ProbeConfigError: no probe to train",
        lambda env: ProbeGrid(task=False),
        ProbeConfigError,
        r"no probe to train",
    ),
    Case(
        "mdl-fraction-nan",
        "MDLBlocks((nan, 1.0))",
        "ProbeConfigError: increasing fractions",
        lambda env: MDLBlocks((math.nan, 1.0)),
        ProbeConfigError,
        r"MDLBlocks\.fractions="
        r"\(nan, 1\.0\): needs at least two strictly increasing",
    ),
    Case(
        "fit-string-labels",
        'fit_probes(feats, np.array(["NOUN", ...]))',
        "ProbeInputError: map strings with np.unique",
        lambda env: fit(targets=np.array(["NOUN", "VERB"] * 60)),
        ProbeInputError,
        r"targets: values of type str_? .*np\.unique",
    ),
    Case(
        "fit-diverging",
        "a probe whose loss becomes inf (features ~3e38)",
        "reported: diverged_epoch set, metrics NaN, ProbeDivergedWarning",
        diverging,
        None,
        r"probes diverged",
        warns=ProbeDivergedWarning,
    ),
    Case(
        "fit-no-test",
        "splits with no test item",
        "EmptySplitWarning; test metrics NaN",
        no_test_items,
        None,
        r"no item is in test",
        warns=EmptySplitWarning,
    ),
    Case(
        "fit-cuda-missing",
        'fit_probes(..., device="cuda:7")',
        "DeviceError: CUDA not available / no such GPU",
        lambda env: fit(device="cuda:7"),
        DeviceError,
        r"device='cuda:7'",
    ),
    Case(
        "fit-nan-features",
        "features holding a NaN",
        "ProbeInputError: first at index",
        lambda env: fit_probes(
            torch.full((10, 1, 2), math.nan),
            torch.zeros(10).long(),
            torch.zeros(10).long(),
            progress=False,
        ),
        ProbeInputError,
        r"values are NaN or inf \(first at index",
    ),
    Case(
        "fit-no-dev",
        "splits with no dev item",
        "ProbeInputError: assign dev items",
        lambda env: fit(splits=np.zeros(120, dtype=np.int64)),
        ProbeInputError,
        r"no item is in dev",
    ),
    Case(
        "logistic-label-minus-one",
        "fit_logistic_regression(X, y) with y = -1 for some items",
        "ProbeInputError: label -1 is negative; drop unlabelled items",
        lambda env: fit_logistic_regression(
            torch.ones(1, 6, 2), torch.tensor([[0, 1, 0, 1, -1, 1]])
        ),
        ProbeInputError,
        r"y: label -1 is negative",
    ),
    Case(
        "logistic-y-int",
        "fit_logistic_regression(X, -1)",
        "ProbeInputError: give tensors",
        lambda env: fit_logistic_regression(torch.ones(1, 6, 2), -1),
        ProbeInputError,
        r"y is int; give torch tensors",
        typed=True,
    ),
    Case(
        "results-flipped-byte",
        "a byte of weights.safetensors flipped after save",
        "ResultsDamagedError naming weights.safetensors",
        flip_weights,
        ResultsDamagedError,
        r"weights\.safetensors is damaged",
    ),
    Case(
        "results-no-manifest",
        "a results folder without manifest.json (save killed)",
        "ResultsDamagedError: damaged or incomplete",
        drop_manifest,
        ResultsDamagedError,
        r"is damaged or incomplete: it has no manifest\.json",
    ),
    Case(
        "results-mixed-runs",
        "metrics.parquet of another run copied in",
        "ResultsDamagedError naming metrics.parquet",
        swap_in_old_file,
        ResultsDamagedError,
        r"metrics\.parquet is damaged",
    ),
    Case(
        "mass-mean-regression",
        'fit_probes(feats, float targets, grid=ProbeGrid(kind="mass_mean"))',
        "ProbeConfigError: needs class ids; use kind='linear'",
        lambda env: fit(targets=data()[1].float(), grid=ProbeGrid(seeds=[0], kind="mass_mean")),
        ProbeConfigError,
        r"ProbeGrid\.kind='mass_mean' needs class ids",
    ),
    Case(
        "mass-mean-mdl",
        'ProbeGrid(kind="mass_mean", mdl=True)',
        "ProbeConfigError: not a codelength; use kind='linear' for MDL",
        lambda env: fit(grid=ProbeGrid(seeds=[0], kind="mass_mean", mdl=True)),
        ProbeConfigError,
        r"kind='mass_mean', mdl=True\): .* not a codelength",
    ),
    Case(
        "directions-absent-class",
        "directions(feats, labels, positive=7) with no item of class 7",
        "ProbeInputError: give two classes that both have items",
        lambda env: directions(data()[0], data()[1], model="m", data="d", positive=7),
        ProbeInputError,
        r"0 items of class positive=7 .* both have items",
    ),
]
