"""A synthetic sweep folder in the results schema: three subjects, two phenomenon types (the
third subject ran the syntax tasks only), task and control probes at three layers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from suites.schema import RESULTS_SCHEMA, conform, score_table

TASKS = {"upos": ("part of speech", "syntax"), "negation": ("negation", "semantics")}
SUBJECTS = [("bert", "pretrained"), ("bert", "random"), ("glove", "pretrained")]
LAYERS = (0, 1, 2)


def write_results(
    folder: Path,
    seed: int = 0,
    subjects: Sequence[tuple[str, str]] = SUBJECTS,
    tasks: dict[str, tuple[str, str]] = TASKS,
    file: str = "results.parquet",
) -> Path:
    """`results.parquet` (or `file`), `leaderboard.parquet` and `manifest.json` of a sweep, in
    `folder`; a pretrained model scores 0.9 (`glove` 0.8, and no semantics task), a random one
    0.5, each plus 0.05 per layer."""
    rng = np.random.default_rng(seed)
    rows = []
    for model, init in subjects:
        for task, (phenomenon, kind) in tasks.items():
            if model == "glove" and kind == "semantics":
                continue
            for layer in LAYERS:
                for split in ("dev", "test"):
                    for variant in ("task", "control"):
                        for probe_seed in (0, 1):
                            pretrained = 0.8 if model == "glove" else 0.9
                            base = pretrained if init == "pretrained" else 0.5
                            value = base - 0.3 * (variant == "control") + 0.05 * layer
                            rows.append(
                                {
                                    "model": model,
                                    "init": init,
                                    "task": task,
                                    "phenomenon": phenomenon,
                                    "phenomenon_type": kind,
                                    "site": f"encoder.{layer}",
                                    "layer": layer,
                                    "seed": probe_seed,
                                    "variant": variant,
                                    "split": split,
                                    "value": float(value + rng.normal(0, 0.01)),
                                }
                            )
    frame = conform(pl.DataFrame(rows), suite="edge", mask=1.0, metric="accuracy", unit="u")
    folder.mkdir(parents=True, exist_ok=True)
    frame.write_parquet(folder / file)
    score_table(frame).write_parquet(folder / "leaderboard.parquet")
    manifest = {"suite": "sweep", "status": "done", "models": [{"label": m} for m, _ in subjects]}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    assert list(frame.columns) == list(RESULTS_SCHEMA)
    return folder
