"""`ModelWorker`: loads one model once and runs its units, in this process (local executor)
or as a Ray actor (ray executor), so both executors run exactly the same code per unit.

Every unit runs with the sweep's thread count; every random draw of the suites is seeded
explicitly by their settings, so a unit's numbers do not depend on the executor, the worker or
the order units run in. A unit's exception (or the model's failure to load) becomes the unit's
`UnitOutcome.error`; it never stops other units.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import cast

import polars as pl
import torch

from internals import Backend, Init, Subject, load_subject
from suites.registry import SUITES
from suites.schema import BASELINE_INIT, RESULTS_SCHEMA
from suites.sweep.config import ModelSpec
from suites.sweep.units import Unit, UnitContext, UnitError, UnitOutcome, worker_name


@contextmanager
def unit_threads(threads: int) -> Iterator[None]:
    """Torch's intra-op threads for one unit (the caller's setting restored afterwards)."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def load_model(model: ModelSpec, device: str | None) -> Subject:
    """The subject of a model spec."""
    dtype = None if model.dtype == "auto" else getattr(torch, model.dtype)
    return load_subject(
        model.name,
        init=cast(Init, model.init),  # checked by load_subject
        seed=model.seed,
        dtype=dtype,
        backend=cast(Backend, model.backend),
        device=device,
    )


def label_rows(rows: pl.DataFrame, unit: Unit) -> pl.DataFrame:
    """A suite's result rows labelled with the sweep's model label, init, suite and unit
    (baseline rows, init "baseline", keep their own model and init)."""
    model = pl.col("init") != BASELINE_INIT
    labelled = rows.with_columns(
        unit=pl.lit(unit.id),
        suite=pl.lit(unit.suite),
        model=pl.when(model).then(pl.lit(unit.model.label)).otherwise(pl.col("model")),
        init=pl.when(model).then(pl.lit(unit.model.init)).otherwise(pl.col("init")),
    )
    return labelled.select(list(RESULTS_SCHEMA))


class ModelWorker:
    """Runs the units of one model; the model is loaded on the first unit and kept."""

    def __init__(self, model: ModelSpec, context: UnitContext) -> None:
        self.model, self.context = model, context
        self.subject: Subject | None = None
        self.load_error: UnitError | None = None

    def run(self, unit: Unit) -> UnitOutcome:
        """Run one unit of this worker's model; errors come back in the outcome."""
        if unit.model != self.model:
            raise ValueError(f"unit {unit.id} is for {unit.model.label}, not {self.model.label}")
        start = time.perf_counter()
        if self.load_error is not None:  # the model failed to load for an earlier unit
            return UnitOutcome(unit.id, None, 0.0, worker_name(), error=self.load_error)
        loaded, load_seconds = self.subject is None, 0.0
        try:
            with unit_threads(self.context.threads):
                if self.subject is None:
                    try:
                        self.subject = load_model(self.model, self.context.device)
                    finally:
                        load_seconds = time.perf_counter() - start
                suite = SUITES[unit.suite]
                context = self.context.run_context(unit.id)
                rows = suite.run(unit.config, unit.group, self.subject, context)
            error, rows = None, label_rows(rows, unit)
        except Exception as caught:
            error, rows = UnitError.of(caught), None
            if self.subject is None:
                self.load_error = error
        seconds = time.perf_counter() - start
        return UnitOutcome(unit.id, rows, seconds, worker_name(), loaded, load_seconds, error)

    def close(self, *, collect: bool = True) -> None:
        """Drop the model; `collect` also frees it now (a transformer subject holds reference
        cycles, so only the cycle collector frees its weights before the next model loads)."""
        self.subject = None
        if collect:
            gc.collect()
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
