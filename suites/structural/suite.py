"""The structural suite in the suite contract: distance and depth probes of one treebank per
unit, every layer, against the right-branching baseline (Hewitt & Manning 2019).

The features are one row per word of one treebank. Run with a store and a memory budget
(`--store DIR --memory 4GiB`, or a sweep's `store` and `[probe] memory`, which sets
`StructuralConfig.memory`), they are extracted lazily into the store and the probes read the
`FeatureSet` a group of sites within the budget at a time, each group trained to the end before
the next is read: the rows equal those of the features held in memory. Without a store, the
features are held in memory whatever the budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from internals import Subject
from internals import sites as site_rules
from suites.datasets import DataSource
from suites.datasets.references import absolute_files, dataset_label
from suites.outputs import write_manifest
from suites.provenance import dataset_record, model_record
from suites.structural.config import StructuralSuiteConfig
from suites.structural.experiment import BASELINE, SUITE, run_structural
from suites.structural.reading import read_banks
from suites.structural.report import TABLE, print_best, render_structural, write_structural
from suites.suite import RunContext, Suite, TaskGroup, identity


class StructuralSuite(Suite):
    """Structural probes (Hewitt & Manning 2019): UUAS, DSpr., root accuracy, NSpr. by layer."""

    name = SUITE
    summary = "structural probes: parse-tree distances and depths (Hewitt & Manning 2019)"
    config_type = StructuralSuiteConfig
    headline_metrics = ("uuas", "root_acc")
    manifest_names = (SUITE,)

    def table_values(self, table: dict[str, Any], base: Path) -> dict[str, Any]:
        """A sweep entry's values: file paths relative to the config file made absolute."""
        return absolute_files(table, ("train_file", "test_file"), base)

    def units(self, config: StructuralSuiteConfig, data: DataSource) -> list[TaskGroup]:
        """One unit per model: both kinds of probe on the config's treebank."""
        dataset = dataset_label(config.train_file)
        return [TaskGroup(f"{dataset}:structural", tuple(config.kinds))]

    def probes_per_site(self, config: StructuralSuiteConfig) -> int:
        """Kinds x seeds x ranks."""
        return len(config.kinds) * len(config.seeds) * len(config.ranks)

    def run(
        self,
        config: StructuralSuiteConfig,
        group: TaskGroup,
        subject: Subject,
        context: RunContext,
    ) -> pl.DataFrame:
        """Probe every chosen layer of `subject`; the unit folder gets the rows and plots."""
        banks = read_banks(config, context.data)
        sites = list(dict.fromkeys(site_rules.select(subject, config.layers)))
        rows = run_structural(
            [subject],
            banks.train,
            banks.dev,
            banks.test,
            sites,
            config,
            dataset=banks.dataset,
            store=context.store,
            progress=context.progress,
        )
        write_structural(rows, context.out)
        write_manifest(
            context.out,
            SUITE,
            status="done",
            models=[model_record(subject)],
            data=[dataset_record(banks.dataset, list(banks.files))],
            settings=identity(config),
        )
        return rows

    def report(self, out: Path) -> None:
        """Re-render a structural folder from its parquet file."""
        rows = pl.read_parquet(out / TABLE)
        render_structural(rows, out)
        print_best(rows)

    def summarize(self, rows: pl.DataFrame, units: list[Path], out: Path) -> None:
        """Plots by layer over every model of a sweep (the baseline once)."""
        base = rows.filter(pl.col("model") == BASELINE).unique(
            ["task", "split", "metric"], maintain_order=True
        )
        render_structural(pl.concat([rows.filter(pl.col("model") != BASELINE), base]), out)
