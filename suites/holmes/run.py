"""A Holmes run: every model x dataset probed at the chosen sites, one leaderboard.

Per (model, dataset): features at the sites (`layers`, default the last layer as Holmes)
through the activation store, then ONE probe grid (seeds x task/control x train fractions x MDL
blocks) with `suites.probing.probe_task`. A Holmes folder holds the result rows
(`results.parquet`, `suites.schema.RESULTS_SCHEMA` with Holmes' compression and item counts) and
the leaderboard read from them (`leaderboard.parquet`, `suites.holmes.scores`). Resuming is the
sweep's (`lingprobe run holmes`, `lingprobe sweep`): each unit is one model and task group.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import polars as pl
from tqdm.auto import tqdm

from internals import Subject
from internals import sites as site_rules
from lingprobe.errors import LingprobeError
from probes import ProbeGrid, TrainConfig
from suites.datasets import DataSource
from suites.holmes.catalog import build_task, expand_names
from suites.holmes.flash import FLASH_FRACTIONS
from suites.holmes.models import model_entries
from suites.holmes.sampling import ensure_dev
from suites.holmes.scores import SUITE, leaderboard, unit_rows
from suites.holmes.summary import write_summary
from suites.outputs import readable, write_manifest, write_table
from suites.probing import probe_task
from suites.provenance import task_record
from suites.suite import Limits, TaskGroup
from suites.tasks import Task

LEADERBOARD = "leaderboard.parquet"
RESULTS = "results.parquet"


class HolmesRunError(LingprobeError, ValueError):
    """A run cannot start or continue; the message says why and what to do."""


def _holmes_grid() -> ProbeGrid:
    # Holmes (Waldis et al. 2024) App. A.2: seeds 0-4; §4.4: selectivity against control tasks
    # and compression by online codelength (Voita & Titov 2020); FlashHolmes §6 adds train
    # fractions 1/2 ... 1/512.
    return ProbeGrid(seeds=(0, 1, 2, 3, 4), control=True, mdl=True, train_fractions=(1.0,))


@dataclass(frozen=True)
class HolmesConfig:
    """Everything that decides a unit's numbers (a rerun into the same folder must match).

    `groups` are the suite's units of work (the CLI's `--tasks`, a sweep's `tasks`); `run_holmes`
    also takes tasks directly.
    """

    probe_fields: ClassVar[tuple[str, ...]] = ("grid", "train")

    grid: ProbeGrid = field(default_factory=_holmes_grid)
    train: TrainConfig = field(default_factory=TrainConfig)  # Holmes App. A.2 defaults
    layers: str = "last"  # Holmes §4.3: the last layer; "all" or "0,3,-1" on request
    pool: str = "mean"  # Holmes §4.3: average the tokens of a span or text
    limits: Limits = field(default_factory=Limits)
    split_seed: int = 0
    model_seed: int = 0  # seed of random-init twins
    groups: tuple[TaskGroup, ...] = ()
    flash: bool = False  # FlashHolmes §6: also train on 1/2 ... 1/512 of train
    # rank the run's models among the published leaderboard's (`suites.holmes.against_published`)
    against_published: bool = False
    # the published leaderboard file to rank against (None: the registry's holmes-leaderboards)
    leaderboard: str | None = None

    def __post_init__(self) -> None:
        extra = FLASH_FRACTIONS if self.flash else ()
        fractions = tuple(sorted({1.0, *self.grid.train_fractions, *extra}, reverse=True))
        object.__setattr__(self, "grid", replace(self.grid, train_fractions=fractions))

    @property
    def fractions(self) -> tuple[float, ...]:
        """The train fractions, 1.0 first."""
        return tuple(self.grid.train_fractions)

    def identity(self) -> dict[str, Any]:
        """JSON form, stored in the manifest and compared on resume (tasks left out)."""
        plain = asdict(replace(self, groups=()))
        plain.pop("groups")
        return json.loads(json.dumps(plain, default=str))


def run_holmes(
    models: Sequence[str | Subject],
    tasks: Sequence[str | Task],
    out: str | Path,
    *,
    config: HolmesConfig | None = None,
    data: DataSource | str | Path | None = None,
    store: str | Path | None = None,
    device: str | None = None,
    progress: bool = True,
    summary: bool = True,
) -> pl.DataFrame:
    """Run every model on every task into `out` (in this process); return the leaderboard.

    models: names (`minilm`, `minilm@random`, `glove:6B.50d`, ...) or `Subject`s.
    tasks: names from `suites.holmes.available_tasks` (groups `blimp`, `ewt`, `curriculum`
    expand), Holmes release folders, or `Task`s. Features are cached in `store` (default
    `OUT/store`). `out` gets `results.parquet` (every unit's rows), `leaderboard.parquet` and,
    with `summary`, the rankings and plots (`write_summary`). A resumable run over many models
    is `lingprobe run holmes` (or a sweep), which records each unit as it finishes.
    """
    config = config or HolmesConfig()
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise HolmesRunError(f"out {folder} is a file; give a folder")
    entries = model_entries(models, config.model_seed)
    built = _tasks(tasks, data, config)  # every task checked and built before out is touched
    folder.mkdir(parents=True, exist_ok=True)
    store = Path(store) if store is not None else folder / "store"
    parts = []
    bar = tqdm(total=len(entries) * len(built), disable=not progress, desc="holmes", unit="unit")
    for entry in entries:
        for task in built:
            bar.set_postfix_str(f"{entry.label} / {task.name}")
            subject = entry.load()
            parts.append(
                holmes_unit(subject, task, config, store, device, progress, label=entry.label)
            )
            bar.update()
        entry.release()
    bar.close()
    board = write_unit(folder, pl.concat(parts), config, built, [e.label for e in entries])
    if summary:
        write_summary(board, folder)
    return board


def write_unit(
    folder: Path, rows: pl.DataFrame, config: HolmesConfig, tasks: list[Task], models: list[str]
) -> pl.DataFrame:
    """A Holmes folder: result rows, the leaderboard read from them, the manifest."""
    write_table(rows, folder / RESULTS)
    board = leaderboard(rows)
    write_table(board, folder / LEADERBOARD)
    write_manifest(
        folder,
        SUITE,
        status="done",
        config=config.identity(),
        models=models,
        datasets=[t.name for t in tasks],
        data=[task_record(t) for t in tasks],
    )
    return board


def collect_rows(folder: str | Path) -> pl.DataFrame:
    """The result rows of a Holmes folder."""
    path = Path(folder) / RESULTS
    if not readable(path):
        raise HolmesRunError(f"{folder} holds no Holmes results; run `lingprobe run holmes` first")
    return pl.read_parquet(path)


def collect_leaderboard(folder: str | Path) -> pl.DataFrame:
    """The Holmes leaderboard of a Holmes folder (read again from its rows)."""
    return leaderboard(collect_rows(folder))


def build_group(
    names: Sequence[str | Task], data: DataSource | str | Path | None, config: HolmesConfig
) -> list[Task]:
    """The tasks of `names` (groups expanded), each once, capped by `config.limits`."""
    return _tasks(names, data, config)


def _tasks(
    tasks: Sequence[str | Task], data: DataSource | str | Path | None, config: HolmesConfig
) -> list[Task]:
    built: list[Task] = []
    for task in tasks:
        if isinstance(task, Task):
            built.append(ensure_dev(task, seed=config.split_seed))
            continue
        for name in expand_names([task], data):
            built.append(build_task(name, data, limits=config.limits, seed=config.split_seed))
    names = [t.name for t in built]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise HolmesRunError(f"tasks {repeated} appear twice; give each dataset once")
    if not built:
        raise HolmesRunError("no tasks given; name at least one (e.g. blimp-adjunct_island, upos)")
    return built


def holmes_unit(
    subject: Subject,
    task: Task,
    config: HolmesConfig,
    store: str | Path | None,
    device: str | None,
    progress: bool,
    *,
    label: str | None = None,
    unit: str = "",
) -> pl.DataFrame:
    """One (model, dataset) unit: features, ONE probe grid, the unit's result rows."""
    chosen = tuple(dict.fromkeys(site_rules.select(subject, config.layers)))  # "0,-1" on GloVe
    grid = replace(
        config.grid, mdl=config.grid.mdl if task.target_type == "classification" else False
    )
    run = probe_task(
        subject,
        task,
        chosen,
        grid=grid,
        config=config.train,
        pool=config.pool,
        store=store,
        device=device,
        progress=progress,
    )
    rows = unit_rows(run, config.fractions, unit)
    return rows if label is None else rows.with_columns(model=pl.lit(label))
