"""Holmes-style tasks built from the registry's datasets, by name, tagged as Holmes tags them.

Names (see `available_tasks`):
  blimp-<UID>                  BLiMP paradigm, good vs bad sentence (`suites.holmes.blimp`)
  upos, xpos, dep              UD English EWT word POS tags and dependency relations
                               (`suites.edge.read_conllu`); train file = train, dev file = test,
                               dev carved from train sentences
  relation-classification      SemEval-2010 Task 8 (`suites.edge.read_semeval`); dev carved
  zorro-<paradigm>             Zorro paradigm, good vs bad sentence (`suites.holmes.zorro`)
  protoroles-<property>, arg-is-<kind>, pred-is-<kind>
                               UDS proto-roles and genericity (`suites.holmes.uds`)
  ud-<treebank>:<task>         any registered UD treebank: upos, xpos, deprel or feats:<Feature>
                               (`suites.holmes.ud`)
  curriculum-<phenomenon>      curriculum NLI pairs (`suites.curriculum.read`); dev carved
  <folder>                     a Holmes release-format folder (`suites.holmes.release`)
Group names expand: `blimp` (every paradigm), `zorro` (every paradigm), `ewt` (upos, xpos, dep),
`curriculum` (every phenomenon), `ud-<treebank>` (its upos, xpos and deprel). Data comes through
`suites.datasets` (`data=`: "full" (default: the data folder, then download), "samples" (the
embedded samples, no network) or a folder holding the registry's paths). Names that are also
Holmes datasets (blimp-*, zorro-*, UDS, upos, xpos, dep, relation-classification) carry the
phenomenon and type the Holmes inventory gives them, so their scores line up with the published
leaderboard's datasets of the same name.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

from suites.datasets import DataSource, as_source
from suites.holmes import ud, uds, zorro
from suites.holmes.blimp import read_blimp
from suites.holmes.inventory import holmes_datasets
from suites.holmes.release import SAMPLES, read_holmes
from suites.holmes.sampling import ensure_dev, limit_items
from suites.holmes.ud import smaller_cap
from suites.holmes.zorro import read_zorro
from suites.readers.conllu import ConlluTask, read_conllu
from suites.readers.curriculum_nli import read_files
from suites.readers.semeval import read_semeval
from suites.suite import Limits
from suites.tasks import Task, TaskError

# Holmes name -> `read_conllu` task
EWT_TASKS: dict[str, ConlluTask] = {"upos": "upos", "xpos": "xpos", "dep": "deprel"}
EWT, BLIMP, SEMEVAL, CURRICULUM = "ud-english-ewt", "blimp", "semeval-2010-task8", "curriculum-nli"
DEV_FRACTION = 0.1  # Holmes §4.3: 10 % dev where the data has none
# (phenomenon type, phenomenon, probe type) of the built-in non-BLiMP datasets in the Holmes
# inventory (Waldis et al. 2024, Table 6), so runs line up with the published leaderboard.
HOLMES_TAGS = {
    "upos": ("syntax", "part-of-speech", "token(s) classification"),
    "xpos": ("syntax", "part-of-speech", "token(s) classification"),
    "dep": ("syntax", "dependency parsing", "token(s) pair classification"),
    "relation-classification": (
        "semantics",
        "relation classification",
        "token(s) pair classification",
    ),
}


def available_tasks(data: DataSource | str | Path | None = None) -> list[str]:
    """Every task name the data source supports (the registry's, or its embedded samples')."""
    source = as_source(data)
    names = [f"blimp-{f.key}" for f in source.dataset(BLIMP).files]
    names += [*list(EWT_TASKS), "relation-classification"]
    names += [f"curriculum-{f.key.split('/')[0]}" for f in _curriculum_files(source)]
    paradigms = [f.key for f in source.dataset(zorro.DATASET).files if f.key != "licence"]
    names += [f"{zorro.PREFIX}{key}" for key in paradigms]
    names += uds.task_names()
    names += ud.task_names(source)
    return list(dict.fromkeys(names))


def _curriculum_files(source: DataSource) -> list:
    dataset = source.dataset(CURRICULUM)
    return [f for f in dataset.files if f.key.endswith("/train") or f.members]


PUBLISHED_GROUP = "published"


def expand_names(names: Sequence[str], data: DataSource | str | Path | None = None) -> list[str]:
    """Task names with the groups `blimp`, `ewt`, `curriculum`, `zorro`, `published` and
    `ud-<treebank>` expanded (order kept, no repeats)."""
    everything = available_tasks(data)
    groups = {
        "blimp": [n for n in everything if n.startswith("blimp-")],
        "ewt": list(EWT_TASKS),
        "curriculum": [n for n in everything if n.startswith("curriculum-")],
        "zorro": [n for n in everything if n.startswith(zorro.PREFIX)],
        # what `--against-published` runs: the leaderboard's datasets that this data builds
        PUBLISHED_GROUP: [n for n in everything if n in set(holmes_datasets()["dataset"])],
        **{bank: [f"{bank}:{t}" for t in ud.TASKS] for bank in ud.treebanks(as_source(data))},
    }
    expanded: list[str] = []
    for name in names:
        for item in groups.get(name, [name]):
            if item not in expanded:
                expanded.append(item)
    return expanded


def build_task(
    name: str,
    data: DataSource | str | Path | None = None,
    *,
    limits: Limits | None = None,
    seed: int = 0,
) -> Task:
    """The Holmes-style task `name` (see the module doc), capped by `limits`."""
    limits = limits or Limits()
    source = as_source(data)
    folder = Path(name)
    known = available_tasks(source)
    if (folder / SAMPLES).exists():
        task = read_holmes(folder, split_seed=seed, data=source)
    elif ud.parse(name) is not None:
        task = ud.build(name, source, limits, seed)
    elif name not in known:
        raise TaskError(unknown_task_message(name, known))
    elif name.startswith("blimp-"):
        path = source.path(BLIMP, name.removeprefix("blimp-"))
        task = read_blimp(path, pairs=limits.blimp_pairs, seed=seed)
    elif name in uds.task_names():
        task = uds.read_uds(name, source)
    elif name.startswith(zorro.PREFIX):
        path = source.path(zorro.DATASET, name.removeprefix(zorro.PREFIX))
        task = read_zorro(path, pairs=limits.blimp_pairs, seed=seed)
    elif name in EWT_TASKS:
        task = _ewt(name, source, limits, seed)
    elif name == "relation-classification":
        task = _semeval(source)
    else:
        task = _curriculum(name, source)
    task = ensure_dev(task, DEV_FRACTION, seed)
    return limit_items(task, limits.per_split(), seed)


def unknown_task_message(name: str, known: Sequence[str]) -> str:
    """An unknown task name answered with the closest known names and where to list them all."""
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    return (
        f"unknown Holmes task {name!r}; {hint}`lingprobe holmes-tasks` lists the"
        f" {len(known)} tasks of this data (groups: blimp, zorro, ewt, curriculum,"
        " ud-<treebank>; ud-<treebank>:feats:<Feature> for one morphological feature; or a"
        f" folder holding {SAMPLES})"
    )


def build_tasks(
    names: Sequence[str],
    data: DataSource | str | Path | None = None,
    *,
    limits: Limits | None = None,
    seed: int = 0,
) -> list[Task]:
    """`build_task` for every (expanded) name."""
    return [build_task(n, data, limits=limits, seed=seed) for n in expand_names(names, data)]


def _tagged(task: Task, name: str) -> Task:
    """`task` renamed to its Holmes name, with the Holmes inventory's phenomenon and type."""
    phenomenon_type, phenomenon, probe_type = HOLMES_TAGS[name]
    return task.with_frame(
        task.frame,
        name=name,
        phenomenon=phenomenon,
        phenomenon_type=phenomenon_type,
        metadata={**task.metadata, "probe_type": probe_type},
    )


def _ewt(name: str, source: DataSource, limits: Limits, seed: int) -> Task:
    # EWT's dev file is the test set (as in the edge-probing demo); dev is carved from train.
    train_file, test_file = source.path(EWT, "train"), source.path(EWT, "dev")
    # `sentences` caps the sentences read from each file; item caps read only as many sentences
    # as items wanted (each sentence has at least one word).
    item_cap = None if limits.train is None else limits.train + (limits.dev or 0)
    train_cap = smaller_cap(limits.sentences, item_cap)
    test_cap = smaller_cap(limits.sentences, limits.test)
    train = read_conllu(
        train_file, EWT_TASKS[name], split="train", seed=seed, limit_sentences=train_cap
    )
    test = read_conllu(
        test_file, EWT_TASKS[name], split="test", seed=seed, limit_sentences=test_cap
    )
    return _tagged(Task.combine(train, test), name)


def _semeval(source: DataSource) -> Task:
    train_file, test_file = source.path(SEMEVAL, "train"), source.path(SEMEVAL, "test")
    combined = Task.combine(read_semeval(train_file, split="train"), read_semeval(test_file))
    return _tagged(combined, "relation-classification")


def _curriculum(name: str, source: DataSource) -> Task:
    phenomenon = name.removeprefix("curriculum-")
    files = [source.path(CURRICULUM, f"{phenomenon}/{split}") for split in ("train", "val")]
    task = read_files(files, phenomenon)
    return task.with_frame(task.frame, name=name)
