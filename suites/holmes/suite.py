"""The Holmes suite in the suite contract: one unit per model and task group."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import polars as pl

from internals import Subject
from suites.datasets import DataSource
from suites.errors import TaskError
from suites.holmes.against_published import (
    compare_to_published,
    protocol_differences,
    record_comparison,
    recorded_comparisons,
    summary_lines,
    write_comparison,
)
from suites.holmes.catalog import (
    PUBLISHED_GROUP,
    available_tasks,
    build_tasks,
    expand_names,
    unknown_task_message,
)
from suites.holmes.published import DATASET, published_scores
from suites.holmes.release import SAMPLES
from suites.holmes.run import (
    LEADERBOARD,
    HolmesConfig,
    build_group,
    collect_leaderboard,
    holmes_unit,
    write_unit,
)
from suites.holmes.scores import SUITE, leaderboard
from suites.holmes.summary import print_summary, write_summary
from suites.outputs import write_table
from suites.suite import RunContext, Suite, TaskGroup
from suites.tasks import Task


class HolmesSuite(Suite):
    """Holmes / FlashHolmes (Waldis et al. 2024): a leaderboard of models over probing datasets."""

    name = SUITE
    summary = "Holmes benchmark: probe models on Holmes-style datasets, rank them"
    config_type = HolmesConfig
    headline_metrics = ("pearson", "macro_f1")  # its tables' metrics, first found wins
    manifest_names = (SUITE,)
    extra_keys: ClassVar[dict[str, str]] = {
        "tasks": "task names (`lingprobe holmes-tasks`), groups blimp, ewt, curriculum, or"
        " Holmes release folders, comma-separated; each one unit"
    }
    derived_fields = ("groups",)

    def table_values(self, table: dict[str, Any], base: Path) -> dict[str, Any]:
        """A sweep entry's `tasks` (names, groups like "ewt", `{group, tasks}` tables) as groups."""
        values = dict(table)
        tasks = values.pop("tasks", None)
        if tasks is None and values.get("against_published"):
            tasks = [PUBLISHED_GROUP]  # every dataset the leaderboard has and this data builds
        if tasks is None:
            raise TaskError(
                "holmes needs tasks (--tasks blimp-adjunct_island,ewt or tasks = [...], or"
                " --against-published for the published leaderboard's datasets)"
            )
        if isinstance(tasks, str):
            tasks = [t.strip() for t in tasks.split(",") if t.strip()]
        if not isinstance(tasks, list) or not tasks:
            raise TaskError("tasks: give a list of task names, groups, or {group, tasks} tables")
        groups = []
        for item in tasks:
            if isinstance(item, str) and item.strip():
                groups.append(TaskGroup(item.strip(), (_task_name(item.strip(), base),)))
            elif isinstance(item, dict) and set(item) == {"group", "tasks"}:
                names = tuple(_task_name(str(t).strip(), base) for t in item["tasks"])
                groups.append(TaskGroup(str(item["group"]).strip(), names))
            else:
                raise TaskError(
                    f"tasks: {item!r} is neither a task name nor a table {{group = NAME,"
                    " tasks = [...]}"
                )
        labels = [g.name for g in groups]
        repeated = sorted({n for n in labels if labels.count(n) > 1})
        if repeated:
            raise TaskError(f"tasks: the groups {repeated} appear twice; give each once")
        values["groups"] = tuple(groups)
        return values

    def check(self, config: HolmesConfig, data: DataSource) -> None:
        """Refuse task names the data does not have (before any model is loaded)."""
        known = available_tasks(data)
        for group in config.groups:
            for name in group.tasks:
                grouped = expand_names([name], data) != [name]
                if name not in known and not grouped and not (Path(name) / SAMPLES).exists():
                    raise TaskError(unknown_task_message(name, known))

    def units(self, config: HolmesConfig, data: DataSource) -> list[TaskGroup]:
        """One unit per task group."""
        return list(config.groups)

    def tasks(self, config: HolmesConfig, group: TaskGroup, data: DataSource) -> list[Task]:
        """The group's tasks as the run builds them (groups such as `ewt` expanded)."""
        return build_tasks(list(group.tasks), data, limits=config.limits, seed=config.split_seed)

    def probes_per_site(self, config: HolmesConfig) -> int:
        """Seeds x variants x train fractions (MDL block probes not counted)."""
        grid = config.grid
        return len(grid.seeds) * len(grid.variants) * len(config.fractions)

    def run(
        self, config: HolmesConfig, group: TaskGroup, subject: Subject, context: RunContext
    ) -> pl.DataFrame:
        """The group's tasks probed into `context.out` (a Holmes folder); its result rows."""
        tasks = build_group(list(group.tasks), context.data, config)
        rows = pl.concat(
            [
                holmes_unit(subject, task, config, context.store, context.device, context.progress)
                for task in tasks
            ]
        )
        write_unit(context.out, rows, config, tasks, [subject.name])
        if config.against_published:
            leaderboard_file = config.leaderboard or context.data.path(DATASET, "holmes")
            record_comparison(context.out, protocol_differences(config), leaderboard_file)
        return rows

    def report(self, out: Path) -> None:
        """Re-render a Holmes folder: its leaderboard, rankings and plots."""
        print_summary(write_summary(collect_leaderboard(out), out))

    def summarize(self, rows: pl.DataFrame, units: list[Path], out: Path) -> None:
        """The Holmes leaderboard, rankings and plots over the Holmes units of a sweep."""
        board = leaderboard(rows)
        write_table(board, out / LEADERBOARD)
        if board["model"].n_unique() >= 2:
            write_summary(board, out)
        asked = recorded_comparisons(units)
        if asked is not None:
            protocol, leaderboard_file = asked
            published = published_scores(path=leaderboard_file)
            comparison = compare_to_published(board, published, protocol)
            page = write_comparison(comparison, out)
            print("\n" + "\n".join(summary_lines(comparison)))
            print(f"\nwrote the combined leaderboard to {page}")


def _task_name(name: str, base: Path) -> str:
    """A task name, or the absolute path of a release folder given relative to `base`."""
    folder = base / name
    return str(folder.resolve()) if (folder / SAMPLES).exists() else name
