"""Units as Weights & Biases runs: one run per unit in the project `WANDB_PROJECT` (default
"lingprobe"), grouped by the sweep's folder name; `WANDB_MODE=offline` keeps them on disk
(under `WANDB_DIR`) for a later `wandb sync`."""

from __future__ import annotations

import os
import re
from itertools import groupby
from pathlib import Path
from types import ModuleType

from suites.trackers.unit_log import UnitLog

PROJECT = "lingprobe"


def artifact_name(unit: str) -> str:
    """A unit id as a W&B artifact name (letters, digits, `-`, `_`, `.`)."""
    return re.sub(r"[^\w.-]", "-", unit)


class WandbTracker:
    """Logs each unit as one W&B run (config = settings, history = headline scores with
    `layer` as their step, an artifact with the unit's files)."""

    name = "wandb"

    def __init__(self, wandb: ModuleType, out: Path) -> None:
        self.wandb = wandb
        self.project = os.environ.get("WANDB_PROJECT") or PROJECT
        self.out = out

    def log_unit(self, log: UnitLog) -> str:
        """One run for the unit; its id."""
        wandb = self.wandb
        run = wandb.init(
            project=self.project,
            name=log.name,
            group=log.sweep.name,
            job_type=log.tags["suite"],
            tags=[log.tags["model"], log.tags["suite"], log.tags["status"]],
            config={"unit": log.name, "sweep": str(log.sweep), **log.settings},
            reinit="create_new",
        )
        try:
            run.define_metric("layer")
            run.define_metric("*", step_metric="layer")
            ordered = sorted(log.scores, key=lambda s: s.layer)
            for layer, scores in groupby(ordered, key=lambda s: s.layer):
                run.log({"layer": layer, **{s.key: s.value for s in scores}})
            run.summary["status"] = log.tags["status"]
            if log.error:
                run.summary["error"] = log.error
            if log.files:
                artifact = wandb.Artifact(artifact_name(log.name), type="lingprobe-unit")
                for path, folder in log.files:
                    artifact.add_file(str(path), name=f"{folder}/{path.name}")
                run.log_artifact(artifact)
        except BaseException:
            run.finish(exit_code=1)
            raise
        run.finish(exit_code=0 if log.ok else 1)
        return str(run.id)
