"""The comparative-correlative suite in the suite contract: one unit per controlled feature."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, ClassVar

import polars as pl

from internals import Subject
from suites.cc import cli, figures
from suites.cc.config import CCConfig
from suites.cc.syntax_probe import probe_feature_subsets
from suites.datasets import DataSource
from suites.outputs import write_manifest, write_table
from suites.schema import subject_rows
from suites.suite import RunContext, TaskGroup
from suites.tasks import Task

SUITE = "cc"
PHENOMENON = "comparative correlative"


class CCSuite:
    """The comparative-correlative probe (Weissweiler et al. 2022): syntax probe per layer."""

    name = SUITE
    summary = "comparative-correlative syntax probe and calibrated semantic test"
    config_type = CCConfig
    aliases: ClassVar[dict[str, str]] = {}
    headline_metrics = ("accuracy",)  # its tables' metrics, first found wins
    manifest_names = (cli.SYNTAX, cli.SEMANTICS)

    def table_values(self, table: dict[str, Any], base: Path) -> dict[str, Any]:
        """A sweep entry's values as they are."""
        return dict(table)

    def check(self, config: CCConfig, data: DataSource) -> None:
        """The grammar is built in: nothing to fetch or check."""

    def units(self, config: CCConfig, data: DataSource) -> list[TaskGroup]:
        """One unit per controlled feature."""
        return [TaskGroup(f"cc:{f}", (f,)) for f in config.features]

    def tasks(self, config: CCConfig, group: TaskGroup, data: DataSource) -> list[Task]:
        """No `Task`s: the sentences are generated inside the unit."""
        return []

    def probes_per_site(self, config: CCConfig) -> int:
        """One logistic probe per data seed."""
        return len(config.seeds)

    def run(
        self, config: CCConfig, group: TaskGroup, subject: Subject, context: RunContext
    ) -> pl.DataFrame:
        """Probe D_f of the group's feature at every layer; rows in the results schema."""
        per_layer, per_value = probe_feature_subsets(
            subject,
            list(group.tasks),
            config.n_per_class,
            config.seeds,
            config=config.logistic,
            store=context.store,
            progress=context.progress,
        )
        context.out.mkdir(parents=True, exist_ok=True)
        write_table(per_layer, context.out / "layers.parquet")
        write_table(per_value, context.out / "values.parquet")
        write_manifest(
            context.out, cli.SYNTAX, features=list(group.tasks), seeds=list(config.seeds)
        )
        rows = per_layer.select(
            task=pl.lit("cc:") + pl.col("feature"),
            site="site_name",
            layer="layer",
            seed="seed",
            value="accuracy",
        )
        fixed = {"variant": "task", "mask": 1.0, "split": "test", "metric": "accuracy"}
        labels = {"phenomenon": PHENOMENON, "phenomenon_type": "syntax", **fixed}
        return subject_rows(rows, subject, SUITE, labels=labels)

    def report(self, out: Path) -> None:
        """Re-render a cc-syntax or cc-semantics folder."""
        cli.report(out)

    def summarize(self, rows: pl.DataFrame, units: list[Path], out: Path) -> None:
        """The per-layer accuracy figure over the sweep's CC units."""
        layers = pl.concat([pl.read_parquet(u / "layers.parquet") for u in units])
        values = pl.concat([pl.read_parquet(u / "values.parquet") for u in units])
        figures.syntax_figures(layers, values, out)

    def register(self, parsers: argparse._SubParsersAction) -> None:
        """`lingprobe run cc-syntax` and `lingprobe run cc-semantics`."""
        cli.register(parsers)
