"""The curriculum NLI suite in the suite contract: one unit per phenomenon.

A unit runs the probe analyses (`CurriculumConfig.analyses`: inoculation, hypothesis-only, PVI,
cross-distribution) into its folder; its result rows are the inoculation curves: task
`curriculum-<phenomenon>` (the full pair input) and `curriculum-<phenomenon>/hypothesis-only`,
with `mask` holding the examples per label the probes were trained on (10, 50, ...).
Zero-shot and fine-tuning need an NLI classifier: `lingprobe curriculum-nli`.

Without a memory budget its features are held in memory. With one (`--memory 4MiB`, a sweep's
`[probe] memory`, which set `CurriculumConfig.train.memory`) they stay on disk in the sweep's
store (`--store DIR`, default OUT/store): the premise and hypothesis vectors are extracted
lazily into the store, the probe inputs (the `combine` parts, the hypothesis alone) are derived
feature sets written chunk by chunk beside them, the probes train from groups of sites that fit
the budget, and PVI and cross-distribution score their held-out items by groups of sites too;
the tables equal those of the run in memory (`run_curriculum` without a store refuses a budget).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from internals import Subject
from internals import sites as site_rules
from suites.curriculum.config import PROBE_ANALYSES, CurriculumConfig
from suites.curriculum.report import print_report, summarise
from suites.curriculum.run import SUITE, run_curriculum
from suites.datasets import DataSource
from suites.errors import TaskError
from suites.outputs import safe_name
from suites.readers.curriculum_nli import PHENOMENON_TYPES, load_phenomena, registry_phenomena
from suites.schema import subject_rows
from suites.suite import RunContext, Suite, TaskGroup
from suites.tasks import Task

INPUT_TASKS = {"pair": "", "hypothesis": "/hypothesis-only"}


class CurriculumSuite(Suite):
    """Curriculum NLI diagnostics (Chen & Gao 2022) with probes on frozen features."""

    name = SUITE
    summary = "curriculum NLI diagnostics (zero-shot, inoculation, PVI, ...)"
    config_type = CurriculumConfig
    headline_metrics = ("accuracy",)  # its tables' metrics, first found wins
    manifest_names = (SUITE,)

    def check(self, config: CurriculumConfig, data: DataSource) -> None:
        """Sweeps run the probe analyses only; phenomena must be in the data."""
        needs_model = [a for a in config.analyses if a not in PROBE_ANALYSES]
        if needs_model:
            raise TaskError(
                f"analyses {needs_model} need an NLI classifier; run them with `lingprobe"
                f" curriculum-nli`, and keep to {list(PROBE_ANALYSES)} here"
            )
        offered = registry_phenomena(data)
        unknown = [p for p in config.phenomena if p not in offered]
        if unknown:
            raise TaskError(f"phenomena {unknown} are not in the data; choose from {offered}")

    def _phenomena(self, config: CurriculumConfig, data: DataSource) -> list[str]:
        offered = registry_phenomena(data)
        return list(config.phenomena) or [p for p in PHENOMENON_TYPES if p in offered]

    def units(self, config: CurriculumConfig, data: DataSource) -> list[TaskGroup]:
        """One unit per phenomenon."""
        return [TaskGroup(p, (p,)) for p in self._phenomena(config, data)]

    def tasks(self, config: CurriculumConfig, group: TaskGroup, data: DataSource) -> list[Task]:
        """The phenomenon as a task (capped by `config.limits`)."""
        tasks = load_phenomena(list(group.tasks), data)
        caps = {k: v for k, v in config.limits.per_split().items() if v is not None}
        return [t.subsample(caps, seed=config.split_seed) if caps else t for t in tasks.values()]

    def probes_per_site(self, config: CurriculumConfig) -> int:
        """Sizes x seeds x inputs of the inoculation curves."""
        inputs = sum(a in config.analyses for a in ("inoculation", "hypothesis-only"))
        return len(config.sizes) * len(config.seeds) * max(inputs, 1)

    def run(
        self, config: CurriculumConfig, group: TaskGroup, subject: Subject, context: RunContext
    ) -> pl.DataFrame:
        """The probe analyses of one phenomenon into `context.out`; its curve rows."""
        (task,) = self.tasks(config, group, context.data)  # type: ignore[arg-type]
        sites = site_rules.select(subject, config.layers)
        run_curriculum(
            {task.phenomenon: task},
            context.out,
            subject=subject,
            sites=sites,
            analyses=config.analyses,
            config=config,
            store=context.store,
            progress=context.progress,
        )
        curves = pl.read_parquet(context.out / task.phenomenon / "inoculation.parquet")
        rows = curves.filter(pl.col("input").is_in(list(INPUT_TASKS))).select(
            pl.lit(f"curriculum-{task.phenomenon}")
            .add(pl.col("input").replace_strict(INPUT_TASKS))
            .alias("task"),
            site="site_name",
            layer="layer",
            seed="seed",
            mask=pl.col("n_per_label").cast(pl.Float64),
            split="split",
            metric="metric",
            value="value",
        )
        labels = {"phenomenon": task.phenomenon, "phenomenon_type": task.phenomenon_type}
        return subject_rows(rows, subject, SUITE, labels={"variant": "task", **labels})

    def report(self, out: Path) -> None:
        """Re-render a curriculum folder."""
        print_report(out)

    def summarize(self, rows: pl.DataFrame, units: list[Path], out: Path) -> None:
        """The curriculum summaries (tables and plots) over each model's units, in
        `out/<model>/`."""
        owners = dict(rows.select("unit", "model").unique().iter_rows())
        for model in sorted(set(owners.values())):
            mine = [u for u in units if owners.get(u.name) == model]
            summarise(out / safe_name(model), mine)
