"""One side (train or test) of an edge task from its spec (`conllu:upos`, `jiant`, `semeval`)."""

from __future__ import annotations

from pathlib import Path

from suites.datasets import DataSource, registry_reference, resolve_file
from suites.edge.jiant import read_jiant
from suites.errors import TaskError
from suites.readers.conllu import read_conllu
from suites.readers.feats import FEATS_PREFIX, feature_of, read_feature
from suites.readers.semeval import read_semeval
from suites.tasks import Task

FIXED_TASKS = ("conllu:upos", "conllu:xpos", "conllu:deprel", "conllu:arc", "jiant", "semeval")
TASK_HELP = (
    "conllu:upos | conllu:xpos | conllu:deprel | conllu:arc | conllu:feats:<Feature> | jiant"
    " | semeval"
)


def edge_task(spec: str) -> str:
    """`spec` when it names an edge task (`conllu:upos` ... or `conllu:feats:<Feature>`)."""
    if spec in FIXED_TASKS:
        return spec
    reader, _, variant = spec.partition(":")
    if reader == "conllu" and variant.startswith(FEATS_PREFIX):
        feature_of(variant)
        return spec
    raise TaskError(f"task={spec!r}: choose one of {TASK_HELP}")


def read_task(
    spec: str,
    file: str | Path,
    split: str,
    limit: int | None = None,
    data: DataSource | str | Path | None = None,
) -> Task:
    """Read one side of an edge task named like `conllu:upos`.

    `file` is a path or a registry reference such as `ud-english-ewt:train` (resolved in
    `data`); `limit` caps the sentences read (CoNLL-U).
    """
    reader, _, variant = spec.partition(":")
    path = resolve_file(file, data, what=f"--{split}")
    if reader == "conllu" and variant.startswith(FEATS_PREFIX):
        task = read_feature(path, feature_of(variant), split=split, limit_sentences=limit)
    elif reader == "conllu":
        task = read_conllu(path, variant or "upos", split=split, limit_sentences=limit)  # type: ignore[arg-type]
    elif reader == "jiant":
        task = read_jiant(path, split=split)
    elif reader == "semeval":
        task = read_semeval(path, split=split)
    else:
        raise TaskError(f"task={spec!r}: choose one of {TASK_HELP}")
    return task.with_frame(task.frame, name=task_name(spec, file, task.name))


def task_name(spec: str, file: str | Path, default: str) -> str:
    """A task named after its dataset and task (`ud-english-ewt:upos`), not its file."""
    reference = registry_reference(str(file))
    if reference is None:
        return default
    dataset = reference[0].removesuffix("-sample")
    return f"{dataset}:{spec.partition(':')[2] or spec}"
