"""A Holmes run: every model x dataset probed at the chosen sites, resumable, one leaderboard.

Per (model, dataset) unit: features at the sites (`--layers`, default the last layer as
Holmes) through the activation store, then ONE probe grid (seeds x task/control x train
fractions x MDL blocks) with `suites.probing.probe_task`. Each unit's result rows
(`suites.schema.RESULTS_SCHEMA`, with Holmes' compression and item counts) are written
atomically to `OUT/units/<unit>.rows.parquet`; a rerun skips units whose rows exist, so an
interrupted run continues where it stopped. `OUT/results.parquet` holds every unit's rows and
`OUT/leaderboard.parquet` the Holmes leaderboard read from them (`suites.holmes.scores`).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import polars as pl
from tqdm.auto import tqdm

from internals import Subject
from internals import sites as site_rules
from lingprobe.errors import LingprobeError
from probes import ProbeGrid, TrainConfig
from suites.datasets import DataSource
from suites.flash import FLASH_FRACTIONS
from suites.holmes.catalog import build_task, expand_names
from suites.holmes.models import ModelEntry, model_entries
from suites.holmes.sampling import ensure_dev
from suites.holmes.scores import SUITE, leaderboard, unit_rows
from suites.holmes.summary import write_summary
from suites.outputs import finish_manifest, read_manifest, readable, write_manifest, write_table
from suites.probing import probe_task
from suites.provenance import task_record
from suites.suite import Limits, TaskGroup
from suites.tasks import Task

log = logging.getLogger(__name__)
LEADERBOARD = "leaderboard.parquet"
RESULTS = "results.parquet"
UNITS = "units"
ROWS = ".rows.parquet"


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

    grid: ProbeGrid = field(default_factory=_holmes_grid)
    train: TrainConfig = field(default_factory=TrainConfig)  # Holmes App. A.2 defaults
    layers: str = "last"  # Holmes §4.3: the last layer; "all" or "0,3,-1" on request
    pool: str = "mean"  # Holmes §4.3: average the tokens of a span or text
    limits: Limits = field(default_factory=Limits)
    split_seed: int = 0
    model_seed: int = 0  # seed of random-init twins
    groups: tuple[TaskGroup, ...] = ()
    # rank the run's models among the published leaderboard's (`suites.holmes.against_published`)
    against_published: bool = False

    def __post_init__(self) -> None:
        fractions = tuple(sorted({1.0, *self.grid.train_fractions}, reverse=True))
        object.__setattr__(self, "grid", replace(self.grid, train_fractions=fractions))

    @property
    def fractions(self) -> tuple[float, ...]:
        """The train fractions, 1.0 first."""
        return tuple(self.grid.train_fractions)

    @classmethod
    def flash(cls, **changes: Any) -> HolmesConfig:
        """The FlashHolmes sweep: train fractions 1, 1/2, ..., 1/512."""
        grid = replace(changes.pop("grid", _holmes_grid()), train_fractions=FLASH_FRACTIONS)
        return cls(grid=grid, **changes)

    def identity(self) -> dict[str, Any]:
        """JSON form, stored in the manifest and compared on resume (tasks left out)."""
        plain = asdict(replace(self, groups=()))
        plain.pop("groups")
        plain.pop("against_published")  # a report of the numbers, not a setting that makes them
        return json.loads(json.dumps(plain, default=str))


def unit_key(label: str, dataset: str, layers: str) -> str:
    """File stem of a unit: model label, dataset and layer spec, made filename-safe."""
    raw = f"{label}__{dataset}__{layers}"
    return re.sub(r"[^A-Za-z0-9._@=-]+", "_", raw)


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
    """Run every model on every task into `out`; return the leaderboard.

    models: names (`minilm`, `minilm@random`, `glove:6B.50d`, ...) or `Subject`s.
    tasks: names from `suites.holmes.available_tasks` (groups `blimp`, `ewt`, `curriculum`
    expand), Holmes release folders, or `Task`s. Features are cached in `store` (default
    `OUT/store`). `summary=False` skips the rankings and plots (`write_summary`), e.g. for one
    unit of a larger sweep that is summarised once at the end.
    """
    config = config or HolmesConfig()
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise HolmesRunError(f"--out {folder} is a file; give a folder (new or a Holmes run)")
    entries = model_entries(models, config.model_seed)
    _check_config(folder, config)
    built = _tasks(tasks, data, config)  # every task checked and built before --out is touched
    folder.mkdir(parents=True, exist_ok=True)
    _write_manifest(folder, config, entries, built)
    store = Path(store) if store is not None else folder / "store"
    (folder / UNITS).mkdir(exist_ok=True)
    todo = [
        (entry, task)
        for entry in entries
        for task in built
        if not readable(_unit_path(folder, entry, task, config))
    ]
    log.info(
        "holmes: %d units to run, %d already done", len(todo), len(entries) * len(built) - len(todo)
    )
    bar = tqdm(total=len(todo), disable=not progress, desc="holmes units", unit="unit")
    for entry in entries:
        mine = [task for e, task in todo if e is entry]
        for task in mine:
            bar.set_postfix_str(f"{entry.label} / {task.name}")
            _run_unit(folder, entry, task, config, store, device, progress)
            bar.update()
        if mine:
            entry.release()
    bar.close()
    rows = collect_rows(folder)
    write_table(rows, folder / RESULTS)
    board = leaderboard(rows)
    write_table(board, folder / LEADERBOARD)
    if summary:
        write_summary(board, folder)
    units = sorted(p.name.removesuffix(ROWS) for p in (folder / UNITS).glob(f"*{ROWS}"))
    finish_manifest(folder, SUITE, units={u: "done" for u in units})
    return board


def collect_rows(folder: str | Path) -> pl.DataFrame:
    """Every unit's result rows under `folder/units` in one frame."""
    files = sorted((Path(folder) / UNITS).glob(f"*{ROWS}"))
    if not files:
        raise HolmesRunError(f"{folder} holds no unit results; run `lingprobe run holmes` first")
    return pl.concat([pl.read_parquet(f) for f in files])


def collect_leaderboard(folder: str | Path) -> pl.DataFrame:
    """The Holmes leaderboard of every unit under `folder/units`."""
    return leaderboard(collect_rows(folder))


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


def _check_config(folder: Path, config: HolmesConfig) -> None:
    """Refuse to resume a folder that was run with other settings (or by another suite)."""
    if not (folder / "manifest.json").exists():
        return
    old = read_manifest(folder)
    if old.get("suite") != SUITE:
        raise HolmesRunError(f"{folder} holds a {old.get('suite')!r} run; use another --out")
    identity = config.identity()
    if old.get("config") != identity:
        changed = changed_settings(old.get("config", {}), identity)
        raise HolmesRunError(
            f"{folder} was run with other settings ({', '.join(changed)} differ); resume"
            " with the same settings or write to another --out"
        )


def changed_settings(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Dotted names of the settings that differ between two config dicts (`grid.seeds`)."""
    if isinstance(old, dict) and isinstance(new, dict):
        keys = sorted(set(old) | set(new))
        return [c for k in keys for c in changed_settings(old.get(k), new.get(k), f"{prefix}{k}.")]
    return [] if old == new else [prefix.rstrip(".")]


def _write_manifest(
    folder: Path, config: HolmesConfig, entries: list[ModelEntry], tasks: list[Task]
) -> None:
    """The manifest: suite, settings, and every model and dataset run into the folder so far."""
    models, datasets = [e.label for e in entries], [t.name for t in tasks]
    records = {t.name: task_record(t) for t in tasks}
    if (folder / "manifest.json").exists():
        old = read_manifest(folder)
        models = list(dict.fromkeys([*old.get("models", []), *models]))
        datasets = list(dict.fromkeys([*old.get("datasets", []), *datasets]))
        records = {**{r["name"]: r for r in old.get("data", [])}, **records}
    write_manifest(
        folder,
        SUITE,
        config=config.identity(),
        models=models,
        datasets=datasets,
        data=list(records.values()),
    )


def _unit_path(folder: Path, entry: ModelEntry, task: Task, config: HolmesConfig) -> Path:
    return folder / UNITS / f"{unit_key(entry.label, task.name, config.layers)}{ROWS}"


def _run_unit(
    folder: Path,
    entry: ModelEntry,
    task: Task,
    config: HolmesConfig,
    store: Path,
    device: str | None,
    progress: bool,
) -> None:
    subject = entry.load()
    path = _unit_path(folder, entry, task, config)
    write_table(
        holmes_unit(subject, task, config, store, device, progress, label=entry.label), path
    )


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
