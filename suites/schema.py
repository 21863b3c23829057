"""The one results schema every suite writes, and the score table every report reads.

`RESULTS_SCHEMA` (one row per probe, split and metric) is what a suite's unit returns and what a
sweep merges; `TASK_SCHEMA` (in `suites.tasks`) is what goes in. Columns:

  model            the model's label (`minilm`, `minilm@random`, a hub id, `glove:6B.50d`)
  init             "pretrained" or "random" (the random-init twin), or "baseline" for a
                   reference that is no model (e.g. right-branching trees, model
                   "right_branching"); sweeps keep such rows' model and init
  suite            the registry name of the suite that produced the row (`suites.registry`)
  task             the task (`ud-english-ewt:upos`, `blimp-adjunct_island`, `curriculum-boolean`,
                   `cc:length`, ...)
  phenomenon       what the task probes (`part-of-speech`, `island effects`, ...) or ""
  phenomenon_type  morphology | syntax | semantics | reasoning | discourse, or ""
  site             a stable site name such as `encoder.3` (`internals.Site.name`)
  layer            the site's layer (0 = embeddings)
  seed             the probe's seed
  variant          "task" or "control" (Hewitt & Liang 2019 control task)
  mask             the train fraction the probe saw (1.0 = all of train; FlashHolmes 1/2 ...)
  split            "train", "dev", "test", or "test:<subset>" for a subset of the test split
                   (edge probing's heuristic-filtered sets, e.g. "test:mem_exact")
  metric           a metric of `probes.metric_table` (accuracy, macro_f1, pearson, auroc,
                   uuas, ...; its label and direction there) or a suite's own (compression,
                   majority_accuracy, ...)
  value            the metric's value
  unit             the id of the unit of work that produced the row (resumable runs, sweeps)

`score_table` turns rows into scores (mean over seeds, sigma, control, selectivity) with
`probes.scores.seed_scores`, the one place those numbers are computed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from internals import Site, Subject
from probes import seed_scores
from suites.tasks import Task

BASELINE_INIT = "baseline"
RESULTS_SCHEMA: dict[str, Any] = {
    "model": pl.String,
    "init": pl.String,
    "suite": pl.String,
    "task": pl.String,
    "phenomenon": pl.String,
    "phenomenon_type": pl.String,
    "site": pl.String,
    "layer": pl.Int64,
    "seed": pl.Int64,
    "variant": pl.String,
    "mask": pl.Float64,
    "split": pl.String,
    "metric": pl.String,
    "value": pl.Float64,
    "unit": pl.String,
}
SCORE_KEYS = [c for c in RESULTS_SCHEMA if c not in ("seed", "variant", "value", "unit")]
SCORE_SCHEMA: dict[str, Any] = {
    **{k: RESULTS_SCHEMA[k] for k in SCORE_KEYS},
    "score": pl.Float64,
    "sigma": pl.Float64,
    "control": pl.Float64,
    "selectivity": pl.Float64,
    "n_seeds": pl.Int64,
    "unit": pl.String,
}

RANDOM_SUFFIX = "@random"  # the label of a random-init twin (`model_label`)


def conform(rows: pl.DataFrame, **labels: Any) -> pl.DataFrame:
    """`rows` with `labels` as constant columns, in `RESULTS_SCHEMA` order and types.

    Missing columns must be given as labels; extra columns are refused, so every suite's rows
    stay in the one schema.
    """
    frame = rows.with_columns(pl.lit(v).alias(k) for k, v in labels.items())
    missing = [c for c in RESULTS_SCHEMA if c not in frame.columns]
    extra = [c for c in frame.columns if c not in RESULTS_SCHEMA]
    if missing or extra:
        raise ValueError(
            f"result rows must have exactly the columns of RESULTS_SCHEMA; missing {missing},"
            f" extra {extra}"
        )
    return frame.select(pl.col(c).cast(t) for c, t in RESULTS_SCHEMA.items())


def subject_rows(
    rows: pl.DataFrame,
    subject: Subject,
    suite: str,
    task: Task | None = None,
    *,
    labels: dict[str, Any] | None = None,
) -> pl.DataFrame:
    """`conform` with the labels every suite writes: the subject's name and init, the suite,
    and (given `task`) its name, phenomenon and type; `labels` add or replace any of them."""
    known: dict[str, Any] = {"model": subject.name, "init": subject.init, "suite": suite}
    if task is not None:
        known |= {
            "task": task.name,
            "phenomenon": task.phenomenon,
            "phenomenon_type": task.phenomenon_type,
        }
    known.setdefault("unit", "")
    return conform(rows, **(known | (labels or {})))


def model_label(name: str, init: str) -> str:
    """A model's display label in tables: its name, "NAME@random" for the random-init twin
    (a name that already ends in "@random", such as a sweep's label, is kept as it is)."""
    if init == "random" and not name.endswith(RANDOM_SUFFIX):
        return f"{name}{RANDOM_SUFFIX}"
    return name


def site_columns(sites: Sequence[Site]) -> pl.DataFrame:
    """`site_index` (position in the features' site axis) -> stable `site` name and `layer`."""
    return pl.DataFrame(
        {
            "site_index": list(range(len(sites))),
            "site": [s.name for s in sites],
            "layer": [s.layer for s in sites],
        },
        schema={"site_index": pl.Int64, "site": pl.String, "layer": pl.Int64},
    )


def score_table(rows: pl.DataFrame) -> pl.DataFrame:
    """Scores of result rows: one row per (model, ..., split, metric) with `SCORE_SCHEMA`.

    A metric with no task/control variants (e.g. compression) is scored like a task metric.
    """
    if rows.height == 0:
        return pl.DataFrame(schema=SCORE_SCHEMA)
    keys = [*SCORE_KEYS, "unit"]
    scores = seed_scores(rows, keys)
    return scores.select(pl.col(c).cast(t) for c, t in SCORE_SCHEMA.items())
