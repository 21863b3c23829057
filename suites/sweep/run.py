"""`run_sweep`: plan the units, skip finished ones, run the rest on an executor, merge.

Output folder: `manifest.json` (suite "sweep", the config file, the planned units),
`units/<unit>/` (each unit's own suite folder), `results/`, `failures/`, `sweep-log.jsonl`
(see `suites.sweep.records`), `results.parquet` (every row, one schema), `leaderboard.parquet`
(their scores), `failures.parquet`, `failures.json`, and `store/` (features) unless
`[sweep] store` points elsewhere.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from suites.outputs import finish_manifest, read_manifest, write_manifest
from suites.suite import identity
from suites.sweep.config import EXECUTORS, SweepConfig
from suites.sweep.errors import SweepConfigError
from suites.sweep.executor_local import run_local
from suites.sweep.executor_ray import import_ray, run_ray
from suites.sweep.lock import sweep_lock
from suites.sweep.merge import write_merged
from suites.sweep.parse import load_config
from suites.sweep.plan import by_model, check_tasks, context_of, plan_units
from suites.sweep.progress import SweepProgress
from suites.sweep.records import Records
from suites.sweep.units import Unit
from suites.trackers.open import open_tracker

SUITE = "sweep"


@dataclass(frozen=True)
class SweepSummary:
    """What one `run_sweep` call did and where the sweep stands."""

    out: Path
    planned: int  # units in the plan
    skipped: int  # already finished before this run
    ran: int  # handed to a worker in this run
    done: int  # planned units that have finished (in this or an earlier run)
    failed: int  # planned units whose latest attempt failed
    seconds: float
    leaderboard: pl.DataFrame
    failures: pl.DataFrame

    @property
    def pending(self) -> int:
        """Planned units neither finished nor failed (e.g. the run was interrupted)."""
        return self.planned - self.done - self.failed


def run_sweep(
    config: SweepConfig | str | Path,
    *,
    executor: str | None = None,
    progress: bool = True,
) -> SweepSummary:
    """Run a sweep (a config file or a parsed `SweepConfig`); `executor` overrides the file's."""
    start = time.perf_counter()
    config = config if isinstance(config, SweepConfig) else load_config(config)
    chosen = executor or config.executor
    if chosen not in EXECUTORS:
        raise SweepConfigError(f"executor {chosen!r} is unknown; choose one of {EXECUTORS}")
    units = plan_units(config)
    check_tasks(config)
    if chosen == "ray":
        import_ray()  # refuse before the output folder is touched
    out = config.out
    _check_folder(out)
    tracker = open_tracker(config.log_to, out) if config.log_to else None
    with sweep_lock(out):
        return _run(config, units, chosen, Records(out, tracker=tracker), progress, start)


def _run(
    config: SweepConfig,
    units: list[Unit],
    chosen: str,
    records: Records,
    progress: bool,
    start: float,
) -> SweepSummary:
    out = records.out
    write_manifest(out, SUITE, **manifest_details(config, units, chosen))
    todo = [u for u in units if not records.is_done(u.id)]
    bar = SweepProgress(len(units), len(units) - len(todo), progress)
    try:
        if chosen == "local":
            run_local(by_model(todo), context_of(config, progress=progress), records, bar)
        else:  # unit bars would interleave across workers: the overall bar only
            context = context_of(config, progress=False)
            run_ray(by_model(todo), context, records, bar, config.resources, config.retries)
    finally:
        bar.close()
    _, board, failures = write_merged(out, [u.id for u in units])
    failed = set(failures["unit"].to_list())
    status = {
        u.id: "done" if records.is_done(u.id) else "failed" if u.id in failed else "not run"
        for u in units
    }
    finish_manifest(
        out,
        SUITE,
        status="done" if all(v == "done" for v in status.values()) else "incomplete",
        unit_status=status,
    )
    return SweepSummary(
        out=out,
        planned=len(units),
        skipped=len(units) - len(todo),
        ran=len(todo),
        done=sum(records.is_done(u.id) for u in units),
        failed=failures.height,
        seconds=time.perf_counter() - start,
        leaderboard=board,
        failures=failures,
    )


def manifest_details(config: SweepConfig, units: list[Unit], executor: str) -> dict:
    """The manifest's fields: config file, executor, and every planned unit."""
    return {
        "config": str(config.source) if config.source else None,
        "config_text": config.source.read_text() if config.source else None,
        "executor": executor,
        "retries": config.retries,
        "models": [m.identity() | {"label": m.label} for m in config.models],
        "suites": [{"suite": e.suite, "settings": identity(e.config)} for e in config.suites],
        "data": str(config.data or "full"),
        "trust_local": config.trust_local,
        "log_to": config.log_to,
        "units": [u.id for u in units],
        "plan": [
            {
                "unit": u.id,
                "model": u.model.label,
                "suite": u.suite,
                "group": u.group.name,
                "tasks": list(u.group.tasks),
            }
            for u in units
        ],
    }


def _check_folder(out: Path) -> None:
    """Refuse an output folder that another suite wrote, or a file."""
    if out.exists() and not out.is_dir():
        raise SweepConfigError(f"out {out} is a file; give a folder (new, or a sweep's)")
    if (out / "manifest.json").exists():
        suite = read_manifest(out).get("suite")
        if suite != SUITE:
            raise SweepConfigError(
                f"{out} holds a {suite!r} run, not a sweep; set [sweep] out to another folder"
            )
