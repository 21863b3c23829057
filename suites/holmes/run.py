"""A Holmes run: every model x dataset probed at the chosen sites, resumable, one leaderboard.

Per (model, dataset) unit: features at the sites (`--layers`, default the last layer as
Holmes) through the activation store, then ONE probe grid (seeds x task/control x train
fractions x MDL blocks) with `suites.probing.probe_task`. Each unit's per-seed table and its
scores (`suites.holmes.scores`) are written atomically under `OUT/units/`; a rerun skips
units whose score file exists, so an interrupted run continues where it stopped. The
leaderboard is every unit's scores in one parquet (`OUT/leaderboard.parquet`).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
from tqdm.auto import tqdm

from internals import Subject
from internals import sites as site_rules
from lingprobe.errors import LingprobeError
from probes import ProbeGrid, TrainConfig
from suites.flash import FLASH_FRACTIONS
from suites.holmes.catalog import TaskLimits, build_task
from suites.holmes.models import ModelEntry, model_entries
from suites.holmes.scores import unit_scores
from suites.holmes.summary import write_summary
from suites.outputs import read_manifest, write_manifest, write_table
from suites.probing import probe_task
from suites.tasks import Task

log = logging.getLogger(__name__)
SUITE = "holmes"
LEADERBOARD = "leaderboard.parquet"
UNITS = "units"


class HolmesRunError(LingprobeError, ValueError):
    """A run cannot start or continue; the message says why and what to do."""


@dataclass(frozen=True)
class HolmesConfig:
    """Everything that decides a unit's numbers (a rerun into the same folder must match)."""

    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)  # Holmes (Waldis et al. 2024) App. A.2
    control: bool = True  # Holmes §4.4: selectivity against control tasks
    mdl: bool = True  # Holmes §4.4: compression (online code, Voita & Titov 2020)
    fractions: tuple[float, ...] = (1.0,)  # FlashHolmes §6 adds 1/2 ... 1/512
    layers: str = "last"  # Holmes §4.3: the last layer; "all" or "0,3,-1" on request
    pool: str = "mean"  # Holmes §4.3: average the tokens of a span or text
    train: TrainConfig = field(default_factory=TrainConfig)  # Holmes App. A.2 defaults
    limits: TaskLimits = field(default_factory=TaskLimits)
    split_seed: int = 0
    model_seed: int = 0  # seed of random-init twins

    def __post_init__(self) -> None:
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
        fractions = tuple(sorted({1.0, *(float(f) for f in self.fractions)}, reverse=True))
        object.__setattr__(self, "fractions", fractions)

    @classmethod
    def flash(cls, **changes: Any) -> HolmesConfig:
        """The FlashHolmes sweep: train fractions 1, 1/2, ..., 1/512."""
        return cls(fractions=(1.0, *FLASH_FRACTIONS), **changes)

    def identity(self) -> dict[str, Any]:
        """JSON form, stored in the manifest and compared on resume."""
        return json.loads(json.dumps(asdict(self), default=str))


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
    data: str | Path | None = None,
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
    folder.mkdir(parents=True, exist_ok=True)
    entries = model_entries(models, config.model_seed)
    _check_config(folder, config)
    built = _tasks(tasks, data, config)
    _write_manifest(folder, config, entries, built)
    store = Path(store) if store is not None else folder / "store"
    (folder / UNITS).mkdir(exist_ok=True)
    todo = [
        (entry, task)
        for entry in entries
        for task in built
        if not _unit_path(folder, entry, task, config).exists()
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
    board = collect_leaderboard(folder)
    write_table(board, folder / LEADERBOARD)
    if summary:
        write_summary(board, folder)
    return board


def collect_leaderboard(folder: str | Path) -> pl.DataFrame:
    """Every unit's scores under `folder/units` in one frame."""
    files = sorted((Path(folder) / UNITS).glob("*.scores.parquet"))
    if not files:
        raise HolmesRunError(f"{folder} holds no unit results; run `lingprobe run holmes` first")
    return pl.concat([pl.read_parquet(f) for f in files], how="diagonal_relaxed").sort(
        "model", "dataset", "site", "fraction"
    )


def _tasks(
    tasks: Sequence[str | Task], data: str | Path | None, config: HolmesConfig
) -> list[Task]:
    from suites.holmes.catalog import expand_names
    from suites.holmes.sampling import ensure_dev

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
        changed = sorted(k for k in identity if old.get("config", {}).get(k) != identity[k])
        raise HolmesRunError(
            f"{folder} was run with other settings ({', '.join(changed)} differ); resume"
            " with the same settings or write to another --out"
        )


def _write_manifest(
    folder: Path, config: HolmesConfig, entries: list[ModelEntry], tasks: list[Task]
) -> None:
    """The manifest: suite, settings, and every model and dataset run into the folder so far."""
    models, datasets = [e.label for e in entries], [t.name for t in tasks]
    if (folder / "manifest.json").exists():
        old = read_manifest(folder)
        models = list(dict.fromkeys([*old.get("models", []), *models]))
        datasets = list(dict.fromkeys([*old.get("datasets", []), *datasets]))
    write_manifest(folder, SUITE, config=config.identity(), models=models, datasets=datasets)


def _unit_path(folder: Path, entry: ModelEntry, task: Task, config: HolmesConfig) -> Path:
    return folder / UNITS / f"{unit_key(entry.label, task.name, config.layers)}.scores.parquet"


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
    chosen = tuple(dict.fromkeys(site_rules.select(subject, config.layers)))  # "0,-1" on GloVe
    grid = ProbeGrid(
        seeds=config.seeds,
        control=config.control,
        train_fractions=config.fractions,
        mdl=config.mdl and task.target_type == "class",
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
    labels = {"model": entry.label, "name": entry.name, "init": entry.init, "kind": subject.kind}
    seeds = run.table().with_columns(pl.lit(v).alias(k) for k, v in labels.items() if k != "init")
    scores = unit_scores(run, config.fractions, site_rules.last(subject)[0])
    scores = scores.select(*(pl.lit(v).alias(k) for k, v in labels.items()), pl.all())
    path = _unit_path(folder, entry, task, config)
    write_table(seeds, path.with_name(path.name.replace(".scores.", ".seeds.")))
    write_table(scores, path)
