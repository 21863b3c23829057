"""Holmes-style tasks built from the shared data, by name, each tagged from the Holmes inventory.

Names (see `available_tasks`):
  blimp-<UID>                  BLiMP paradigm, good vs bad sentence (`suites.holmes.blimp`)
  upos, xpos, dep              UD English EWT word POS tags and dependency relations
                               (`suites.edge.read_conllu`); train file = train, dev file = test,
                               dev carved from train sentences
  relation-classification      SemEval-2010 Task 8 (`suites.edge.read_semeval`); dev carved
  curriculum-<phenomenon>      curriculum NLI pairs (`suites.curriculum.read`); dev carved
  <folder>                     a Holmes release-format folder (`suites.holmes.release`)
Group names expand: `blimp` (every paradigm), `ewt` (upos, xpos, dep), `curriculum` (every
phenomenon). Names also in the Holmes inventory (blimp-*, upos, xpos, dep,
relation-classification) take its phenomenon and type, so their scores line up with the
published leaderboard's datasets of the same name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from suites.data_paths import data_file, shared_data
from suites.holmes.blimp import read_blimp
from suites.holmes.inventory import lookup
from suites.holmes.release import SAMPLES, read_holmes
from suites.holmes.sampling import ensure_dev, limit_items
from suites.tasks import Task, TaskError

if TYPE_CHECKING:
    from suites.edge.conllu import ConlluTask

# Holmes name -> `read_conllu` task
EWT_TASKS: dict[str, ConlluTask] = {"upos": "upos", "xpos": "xpos", "dep": "deprel"}
EWT_FILES = ("en_ewt-ud-train.conllu", "en_ewt-ud-dev.conllu")
SEMEVAL_FILES = ("TRAIN_FILE.TXT", "TEST_FILE_FULL.TXT")
DEV_FRACTION = 0.1  # Holmes §4.3: 10 % dev where the data has none


@dataclass(frozen=True)
class TaskLimits:
    """Caps for quick runs: items per split (whole sentences) and BLiMP pairs; None = all."""

    train: int | None = None
    dev: int | None = None
    test: int | None = None
    blimp_pairs: int | None = None

    def per_split(self) -> dict[str, int | None]:
        """The item caps by split name."""
        return {"train": self.train, "dev": self.dev, "test": self.test}


def available_tasks(data: str | Path | None = None) -> list[str]:
    """Every task name the shared data supports."""
    root = shared_data(data)
    names = [f"blimp-{p.stem}" for p in sorted((root / "blimp").glob("*.jsonl"))]
    names += [*list(EWT_TASKS), "relation-classification"]
    curriculum = root / "curriculum_nli"
    if curriculum.is_dir():
        names += [f"curriculum-{p.name}" for p in sorted(curriculum.iterdir()) if p.is_dir()]
    return names


def expand_names(names: Sequence[str], data: str | Path | None = None) -> list[str]:
    """Task names with the groups `blimp`, `ewt`, `curriculum` expanded (order kept, no repeats)."""
    everything = available_tasks(data)
    groups = {
        "blimp": [n for n in everything if n.startswith("blimp-")],
        "ewt": list(EWT_TASKS),
        "curriculum": [n for n in everything if n.startswith("curriculum-")],
    }
    expanded: list[str] = []
    for name in names:
        for item in groups.get(name, [name]):
            if item not in expanded:
                expanded.append(item)
    return expanded


def build_task(
    name: str, data: str | Path | None = None, *, limits: TaskLimits | None = None, seed: int = 0
) -> Task:
    """The Holmes-style task `name` (see the module doc), capped by `limits`."""
    limits = limits or TaskLimits()
    folder = Path(name)
    if (folder / SAMPLES).exists():
        task = read_holmes(folder, split_seed=seed, data=data)
    elif name.startswith("blimp-"):
        root = shared_data(data)
        task = read_blimp(
            data_file(root, "blimp", f"{name.removeprefix('blimp-')}.jsonl"),
            pairs=limits.blimp_pairs,
            seed=seed,
            data=root,
        )
    elif name in EWT_TASKS:
        task = _ewt(name, shared_data(data), limits, seed)
    elif name == "relation-classification":
        task = _semeval(shared_data(data), seed)
    elif name.startswith("curriculum-"):
        task = _curriculum(name, shared_data(data), seed)
    else:
        raise TaskError(
            f"unknown Holmes task {name!r}; use one of {available_tasks(data)[:6]}... (see"
            " suites.holmes.available_tasks), a group (blimp, ewt, curriculum) or a folder"
            f" holding {SAMPLES}"
        )
    task = ensure_dev(task, DEV_FRACTION, seed)
    return limit_items(task, limits.per_split(), seed)


def build_tasks(
    names: Sequence[str],
    data: str | Path | None = None,
    *,
    limits: TaskLimits | None = None,
    seed: int = 0,
) -> list[Task]:
    """`build_task` for every (expanded) name."""
    return [build_task(n, data, limits=limits, seed=seed) for n in expand_names(names, data)]


def _tagged(task: Task, name: str, root: Path) -> Task:
    """`task` renamed to its Holmes name, with the inventory's phenomenon and type if listed."""
    entry = lookup(name, root)
    if entry is None:
        return task.with_frame(task.frame, name=name)
    return task.with_frame(
        task.frame,
        name=name,
        phenomenon=entry.phenomenon,
        phenomenon_type=entry.phenomenon_type,
        metadata={**task.metadata, "probe_type": entry.probe_type},
    )


def _ewt(name: str, root: Path, limits: TaskLimits, seed: int) -> Task:
    from suites.edge import read_conllu

    train_file, test_file = (data_file(root, "ud_english_ewt", f) for f in EWT_FILES)
    # With caps, read only as many sentences as items wanted (each sentence has >= 1 word).
    train_cap = None if limits.train is None else limits.train + (limits.dev or 0)
    train = read_conllu(
        train_file, EWT_TASKS[name], split="train", seed=seed, limit_sentences=train_cap
    )
    test = read_conllu(
        test_file, EWT_TASKS[name], split="test", seed=seed, limit_sentences=limits.test
    )
    return _tagged(Task.combine(train, test), name, root)


def _semeval(root: Path, seed: int) -> Task:
    from suites.edge import read_semeval

    train_file, test_file = (data_file(root, "semeval2010_task8", f) for f in SEMEVAL_FILES)
    combined = Task.combine(read_semeval(train_file, split="train"), read_semeval(test_file))
    return _tagged(combined, "relation-classification", root)


def _curriculum(name: str, root: Path, seed: int) -> Task:
    from suites.curriculum import read

    phenomenon = name.removeprefix("curriculum-")
    task = read(data_file(root, "curriculum_nli", phenomenon))
    return task.with_frame(task.frame, name=name)
