"""The flags every command that loads models and reads data shares, with one meaning each:
`--models --init --layers --seeds --data --trust-local --out --store --memory --quiet --device`,
and `--log-to` where units run (`lingprobe run SUITE`, `lingprobe sweep`).

`lingprobe run SUITE` has all of them (`suites.commands.run`); the analysis commands
(`holmes-published`, `amnesic`, `cc-semantics`, `curriculum-nli`) take the ones they use.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from internals import Init
from suites.datasets import DataSource
from suites.datasets.references import DATA_HELP
from suites.errors import TaskError
from suites.sweep.config import INITS
from suites.sweep.units import data_source as sweep_source
from suites.trackers import TRACKERS

MODELS_HELP = "models, comma-separated: hub ids, folders, short names (minilm, smollm2), glove:..."
INIT_HELP = "pretrained, random (the random-init twin), or both comma-separated"
LAYERS_HELP = "sites: all | last | comma-separated layers (0,3,-1) or site names"
SEEDS_HELP = "probe seeds: N (seeds 0..N-1) or a comma-separated list (0,1,2)"
MEMORY_HELP = (
    "memory budget of probe training, e.g. 4GiB (TrainConfig.memory, StructuralConfig.memory)"
)
LOG_TO_HELP = (
    "log each unit (settings, manifest, scores per layer, report files) to an experiment"
    " tracker, where MLFLOW_TRACKING_URI / WANDB_PROJECT point"
)


def csv(text: str) -> list[str]:
    """Comma-separated words, stripped, empty ones dropped."""
    return [part.strip() for part in str(text).split(",") if part.strip()]


def add_models(parser: Any, *, models: str = "minilm", init: str = "pretrained") -> None:
    """`--models` and `--init`."""
    parser.add_argument("--models", default=models, help=MODELS_HELP)
    parser.add_argument("--init", default=init, help=INIT_HELP)


def inits(args: argparse.Namespace) -> list[Init]:
    """The `--init` values, checked."""
    chosen = list(dict.fromkeys(csv(args.init)))
    bad = [i for i in chosen if i not in INITS]
    if bad or not chosen:
        raise TaskError(f"--init {args.init!r}: give {' or '.join(INITS)}, or both comma-separated")
    return [cast(Init, init) for init in chosen]


def add_data(parser: Any, *, default: str | None = None) -> None:
    """`--data` and `--trust-local`."""
    parser.add_argument("--data", default=default, help=DATA_HELP)
    parser.add_argument(
        "--trust-local",
        action="store_true",
        help="use local data files as they are, without checking them against the registry",
    )


def data_source(args: argparse.Namespace) -> DataSource:
    """The `DataSource` of `--data` and `--trust-local` (as sweeps make it)."""
    return replace(sweep_source(args.data, args.trust_local), progress=not args.quiet)


def add_output(parser: Any, *, out: str | None = None, store: bool = True) -> None:
    """`--out` (required unless a default is given), `--store`, `--quiet` and `--device`."""
    parser.add_argument(
        "--out", required=out is None, default=out, help="output folder (rerun to resume)"
    )
    if store:
        parser.add_argument(
            "--store", default=None, help="activation store folder (none: OUT/store)"
        )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--device", default=None, help="torch device (none: the model's)")


def add_log_to(parser: Any, *, default: str | None = None) -> None:
    """`--log-to mlflow|wandb` (sweep key `[sweep] log_to`)."""
    parser.add_argument("--log-to", choices=TRACKERS, default=default, help=LOG_TO_HELP)


def out_path(args: argparse.Namespace) -> Path:
    """`--out` as an absolute path."""
    return Path(args.out).expanduser().resolve()
