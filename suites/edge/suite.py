"""The edge-probing suite in the suite contract: one task (train and test file) per unit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from internals import Subject
from internals import sites as site_rules
from suites.datasets import DataSource, resolve_file
from suites.datasets.references import absolute_files, dataset_label
from suites.edge.experiment import SUITE, EdgeConfig, prepare, run_edge
from suites.edge.readers import read_task, task_name
from suites.edge.report import load_uncertainty, render, render_tables, save_unit
from suites.edge.twins import compare_twins, save_predictions
from suites.outputs import write_manifest
from suites.provenance import dataset_record, model_record
from suites.schema import RANDOM_SUFFIX
from suites.suite import RunContext, Suite, TaskGroup, identity
from suites.tasks import Task


class EdgeSuite(Suite):
    """Edge probing with annotation-artifact filters (Sahu et al.), pretrained vs random."""

    name = SUITE
    summary = "edge probing with annotation-artifact filters (Sahu et al.)"
    config_type = EdgeConfig
    headline_metrics = ("accuracy", "micro_f1")  # its tables' metrics, first found wins
    manifest_names = (SUITE,)

    def table_values(self, table: dict[str, Any], base: Path) -> dict[str, Any]:
        """A sweep entry's values: file paths relative to the config file made absolute."""
        return absolute_files(table, ("train_file", "test_file"), base)

    def units(self, config: EdgeConfig, data: DataSource) -> list[TaskGroup]:
        """One unit per model: the config's task."""
        name = config.name or task_name(config.task, config.train_file, config.task)
        return [TaskGroup(name, (config.task,))]

    def _read(self, config: EdgeConfig, data: DataSource | str | Path | None) -> tuple[Task, Task]:
        cap = config.limits.sentences
        train = read_task(config.task, config.train_file, "train", cap, data)
        test = read_task(config.task, config.test_file, "test", cap, data)
        if config.name:
            train = train.with_frame(train.frame, name=config.name)
        return train, test

    def tasks(self, config: EdgeConfig, group: TaskGroup, data: DataSource) -> list[Task]:
        """The task as the run prepares it (train, carved dev, test)."""
        return [prepare(*self._read(config, data), config)]

    def probes_per_site(self, config: EdgeConfig) -> int:
        """Seeds x variants."""
        return len(config.grid.seeds) * len(config.grid.variants)

    def run(
        self, config: EdgeConfig, group: TaskGroup, subject: Subject, context: RunContext
    ) -> pl.DataFrame:
        """Run the unit into `context.out` (an edge folder `lingprobe report` renders)."""
        train, test = self._read(config, context.data)
        chosen = list(dict.fromkeys(site_rules.select(subject, config.layers)))
        results = run_edge(
            [subject], train, test, chosen, config, store=context.store, progress=context.progress
        )
        save_unit(results, context.out, config.legacy_keys)
        if config.ci is not None:
            save_predictions(context.out, results.scored[0], results.sites)
        files = [resolve_file(f, context.data) for f in (config.train_file, config.test_file)]
        write_manifest(
            context.out,
            SUITE,
            status="done",
            models=[model_record(subject)],
            data=[dataset_record(dataset_label(config.train_file), files)],
            settings=identity(config),
            tasks=[train.name],
            metric=results.meta["metric"],
        )
        return results.scores

    def report(self, out: Path) -> None:
        """Re-render an edge folder from its parquet files."""
        render(out)

    def summarize(self, rows: pl.DataFrame, units: list[Path], out: Path) -> None:
        """Edge tables and plots over the edge units of a sweep: a model and its random twin
        are one model in two inits (the paired test compares their units)."""
        rows = rows.with_columns(model=_model_name(pl.col("model")))
        labels = {
            unit: (str(model), str(init))
            for unit, model, init in rows.select("unit", "model", "init").unique().iter_rows()
        }
        found = {u: labels[u.name] for u in units if u.name in labels}
        heuristics = [p for u in units for p in sorted((u / "units").glob("*.heuristics.parquet"))]
        table2 = pl.concat([pl.read_parquet(p) for p in heuristics], how="diagonal")
        intervals = [
            load_uncertainty(u)[0].with_columns(model=pl.lit(model))
            for u, (model, _) in found.items()
        ]
        render_tables(
            rows,
            table2.unique(maintain_order=True),
            out,
            intervals=pl.concat([i for i in intervals if i.height], how="diagonal")
            if any(i.height for i in intervals)
            else pl.DataFrame(),
            comparisons=compare_twins(found),
        )


def _model_name(label: pl.Expr) -> pl.Expr:
    """The model of a display label (`model_label` undone: the twin's suffix dropped)."""
    return (
        pl.when(pl.col("init") == "random")
        .then(label.str.strip_suffix(RANDOM_SUFFIX))
        .otherwise(label)
    )
