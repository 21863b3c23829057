"""The comparative-correlative suite in the suite contract: one unit per controlled feature
(and one for a labelled corpus, when the config names one).

Each unit's features are one row per sentence (thousands), standardised per site with the
train rows' statistics before one batched logistic regression. By default they are held in
memory. With a store and a budget (`--store` and `--memory`, a sweep's `store` and `[probe]
memory`: `SyntaxProbeConfig.memory`) they stay on disk: the sentences are extracted lazily into
the store, the standardised train rows are written to a derived `FeatureSet` chunk by chunk, and
the probes are fitted and scored by groups of sites within the budget, with results equal to the
in-memory run (`suites.cc.syntax_feature_set`). A budget without a store is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from internals import Subject
from internals import sites as site_rules
from suites.cc import figures
from suites.cc.config import CCConfig
from suites.cc.corpus import read_labelled_sentences, split_corpus
from suites.cc.generate import feature_ranges
from suites.cc.report import SYNTAX, report_syntax
from suites.cc.syntax_probe import probe_feature_subsets, probe_frames
from suites.datasets.references import absolute_files
from suites.outputs import write_manifest, write_table
from suites.schema import subject_rows
from suites.suite import RunContext, Suite, TaskGroup

SUITE = "cc"
PHENOMENON = "comparative correlative"
CORPUS = "corpus"


class CCSuite(Suite):
    """The comparative-correlative probe (Weissweiler et al. 2022): syntax probe per layer."""

    name = SUITE
    summary = "comparative-correlative syntax probe (Weissweiler et al. 2022, §3)"
    config_type = CCConfig
    manifest_names = (SYNTAX,)

    def table_values(self, table: dict[str, Any], base: Path) -> dict[str, Any]:
        """A sweep entry's values: a corpus path relative to the config file made absolute."""
        return absolute_files(table, ("corpus",), base)

    def units(self, config: CCConfig, data: Any) -> list[TaskGroup]:
        """One unit per controlled feature, and one for the corpus."""
        units = [TaskGroup(f"cc:{f}", (f,)) for f in config.features]
        return units + ([TaskGroup(f"cc:{CORPUS}", (CORPUS,))] if config.corpus else [])

    def probes_per_site(self, config: CCConfig) -> int:
        """One logistic probe per data seed."""
        return len(config.seeds)

    def run(
        self, config: CCConfig, group: TaskGroup, subject: Subject, context: RunContext
    ) -> pl.DataFrame:
        """Probe D_f of the group's feature (or the corpus) at `layers`; schema rows."""
        sites = list(dict.fromkeys(site_rules.select(subject, config.layers)))
        settings: dict[str, Any] = {"seeds": list(config.seeds), "layers": config.layers}
        if group.tasks == (CORPUS,):
            corpus = split_corpus(
                read_labelled_sentences(str(config.corpus)), config.corpus_test_fraction
            )
            per_layer, per_value = probe_frames(
                subject,
                {CORPUS: corpus},
                config=config.logistic,
                value_column="length",
                sites=sites,
                store=context.store,
                progress=context.progress,
            )
            per_layer = per_layer.with_columns(seed=pl.lit(0, dtype=pl.Int64))
            context.out.mkdir(parents=True, exist_ok=True)
            write_table(corpus, context.out / "corpus_split.parquet")
            settings["corpus"] = config.corpus
        else:
            per_layer, per_value = probe_feature_subsets(
                subject,
                list(group.tasks),
                config.n_per_class,
                config.seeds,
                config=config.logistic,
                sites=sites,
                store=context.store,
                progress=context.progress,
            )
            ranges = feature_ranges()
            settings["feature_values"] = {
                f: {"train": ranges[f][0], "test": ranges[f][1]} for f in group.tasks
            }
        context.out.mkdir(parents=True, exist_ok=True)
        write_table(per_layer, context.out / "layers.parquet")
        write_table(per_value, context.out / "values.parquet")
        write_manifest(
            context.out,
            SYNTAX,
            status="done",
            features=list(group.tasks),
            n_per_class=config.n_per_class,
            probe=config.logistic.__dict__,
            **settings,
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
        """Re-render a cc unit folder."""
        report_syntax(out)

    def summarize(self, rows: pl.DataFrame, units: list[Path], out: Path) -> None:
        """The per-layer accuracy figure over the sweep's CC units."""
        layers = pl.concat([pl.read_parquet(u / "layers.parquet") for u in units], how="diagonal")
        values = pl.concat([pl.read_parquet(u / "values.parquet") for u in units], how="diagonal")
        figures.syntax_figures(layers, values, out)
