"""Universal Dependencies treebanks as Holmes-style tasks: `ud-<treebank>:<task>`.

`<treebank>` is a registered UD dataset (`ud-french-gsd`, `ud-english-ewt`, ...; `lingprobe data
list`) and `<task>` one of `upos`, `xpos`, `deprel` (as Holmes' `upos`, `xpos`, `dep`) or
`feats:<Feature>` (one morphological feature, e.g. `ud-german-gsd:feats:Case`). Training reads the
treebank's train file, or its dev file where no train file is registered; the test set is its test
file (its dev file where there is no test file); dev is then carved from train (Holmes §4.3).
"""

from __future__ import annotations

import re

from suites.datasets import DataSource
from suites.datasets.registry import registry
from suites.readers.conllu import ConlluTask, read_conllu
from suites.readers.feats import FEATS_PREFIX, feature_of, read_feature
from suites.suite import Limits
from suites.tasks import Task, TaskError

TASKS = ("upos", "xpos", "deprel")  # listed per treebank; feats:<Feature> is accepted too
NAME = re.compile(r"(ud-[a-z0-9-]+):(upos|xpos|deprel|feats:.*)")
# (phenomenon type, phenomenon, probe type), as the Holmes inventory tags upos/xpos/dep.
TAGS = {
    "upos": ("syntax", "part-of-speech", "token(s) classification"),
    "xpos": ("syntax", "part-of-speech", "token(s) classification"),
    "deprel": ("syntax", "dependency parsing", "token(s) pair classification"),
}
FEATS_TAGS = ("morphology", "morphological feature {}", "token(s) classification")


def treebanks(source: DataSource) -> list[str]:
    """The registered UD treebanks this source can read (with samples: only the shipped ones)."""
    names = [n for n, d in registry().items() if n.startswith("ud-") and d.sample_of is None]
    if not source.samples:
        return names
    return [n for n in names if source.dataset(n).embedded]


def task_names(source: DataSource) -> list[str]:
    """`ud-<treebank>:upos|xpos|deprel` of every treebank the source can read."""
    return [f"{bank}:{task}" for bank in treebanks(source) for task in TASKS]


def parse(name: str) -> tuple[str, str] | None:
    """(treebank, task) of a UD task name, or None when `name` is not spelled as one."""
    match = NAME.fullmatch(name)
    if match is None or match.group(1) not in registry():
        return None
    task = match.group(2)
    if task.startswith(FEATS_PREFIX):
        feature_of(task)  # a clear error for `feats:` with no feature
    return match.group(1), task


def split_keys(keys: list[str]) -> tuple[str, str]:
    """(training file key, test file key) of a treebank with these file keys."""
    train = next((k for k in ("train", "dev") if k in keys), None)
    test = next((k for k in ("test", "dev") if k in keys and k != train), None)
    if train is None or test is None:
        raise TaskError(
            f"a UD treebank needs two of train/dev/test files to probe; this one has {keys}"
        )
    return train, test


def build(name: str, source: DataSource, limits: Limits, seed: int) -> Task:
    """The task `name` (`ud-french-gsd:upos`), train and test files read as the module says."""
    parsed = parse(name)
    if parsed is None:
        raise TaskError(f"{name!r} is not a UD task name (ud-<treebank>:upos|xpos|deprel|feats:F)")
    bank, task = parsed
    train_key, test_key = split_keys(source.dataset(bank).keys())
    item_cap = None if limits.train is None else limits.train + (limits.dev or 0)
    caps = {
        "train": smaller_cap(limits.sentences, item_cap),
        "test": smaller_cap(limits.sentences, limits.test),
    }
    sides = []
    for split, key in (("train", train_key), ("test", test_key)):
        path = source.path(bank, key)
        if task.startswith(FEATS_PREFIX):
            side = read_feature(path, feature_of(task), split=split, limit_sentences=caps[split])
        else:
            kind: ConlluTask = task  # type: ignore[assignment]
            try:
                side = read_conllu(path, kind, split=split, seed=seed, limit_sentences=caps[split])
            except TaskError as error:
                raise TaskError(
                    f"{name}: {path.name} gives no {task} items ({error}); this treebank leaves"
                    f" {task.upper()} unannotated (`_`): probe another of {', '.join(TASKS)}"
                ) from error
        sides.append(side)
    combined = Task.combine(sides[0], sides[1])
    phenomenon_type, phenomenon, probe_type = (
        (FEATS_TAGS[0], FEATS_TAGS[1].format(feature_of(task)), FEATS_TAGS[2])
        if task.startswith(FEATS_PREFIX)
        else TAGS[task]
    )
    return combined.with_frame(
        combined.frame,
        name=name,
        phenomenon=phenomenon,
        phenomenon_type=phenomenon_type,
        metadata={**combined.metadata, "probe_type": probe_type, "files": (train_key, test_key)},
    )


def smaller_cap(a: int | None, b: int | None) -> int | None:
    """The smaller of two caps (None: no cap)."""
    return b if a is None else a if b is None else min(a, b)
