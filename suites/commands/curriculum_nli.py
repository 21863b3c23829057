"""`lingprobe curriculum-nli`: the curriculum analyses that need an NLI classifier, not probes.

Zero-shot MCC and accuracy of the model's NLI head per phenomenon, and fine-tuning inoculation
curves (Chen & Gao 2022, §4.2 and App. D). The probe analyses (inoculation, hypothesis-only,
PVI, cross-distribution) are `lingprobe run curriculum`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from internals import load_subject
from suites.commands import flags
from suites.curriculum.config import CurriculumConfig
from suites.curriculum.finetune import FineTuneConfig
from suites.curriculum.report import print_report
from suites.curriculum.run import run_curriculum
from suites.datasets import FULL, SAMPLES
from suites.errors import TaskError
from suites.readers.curriculum_nli import load_phenomena, read_all
from suites.tasks import Task

NLI_ANALYSES = ("zero-shot", "finetune")
FOLDER = "curriculum_nli"


def read_tasks(data: str | None, phenomena: list[str] | None) -> dict[str, Task]:
    """The phenomena from the registry (`full`, `samples`) or a folder of phenomenon folders."""
    if data is None or data in (FULL, SAMPLES):
        return load_phenomena(phenomena, data)
    path = Path(data).expanduser()
    if not any(path.glob("*/train.jsonl")) and any((path / FOLDER).glob("*/train.jsonl")):
        path = path / FOLDER  # a data folder holding curriculum_nli/
    return read_all(path, phenomena)


def run(args: argparse.Namespace) -> int:
    """Handler of `lingprobe curriculum-nli`."""
    analyses = flags.csv(args.analyses)
    unknown = [a for a in analyses if a not in NLI_ANALYSES]
    if unknown or not analyses:
        raise TaskError(f"--analyses {args.analyses!r}: choose from {', '.join(NLI_ANALYSES)}")
    tasks = read_tasks(args.data, flags.csv(args.phenomena) or None)
    caps = {k: v for k, v in (("train", args.limit_train), ("test", args.limit_test)) if v}
    if caps:
        tasks = {n: t.subsample(caps, seed=0) for n, t in tasks.items()}
    models = flags.csv(args.models)
    if len(models) != 1:
        raise TaskError(f"--models {args.models!r}: give one NLI classifier")
    nli_model = load_subject(models[0], head="sequence-classification", device=args.device)
    out = run_curriculum(
        tasks,
        flags.out_path(args),
        nli_model=nli_model,
        label_order=flags.csv(args.label_order) or None,
        analyses=analyses,
        config=CurriculumConfig(analyses=tuple(analyses)),
        finetune=FineTuneConfig(epochs=args.finetune_epochs),
        progress=not args.quiet,
    )
    print_report(out)
    return 0


def register(parsers: argparse._SubParsersAction) -> None:
    """Add `lingprobe curriculum-nli`."""
    p = parsers.add_parser(
        "curriculum-nli",
        help="curriculum NLI: zero-shot and fine-tuning of an NLI classifier",
        description=__doc__,
    )
    flags.add_models(p, models="minilm")
    flags.add_data(p, default=FULL)
    flags.add_output(p, store=False)
    p.add_argument("--phenomena", default="", help="comma-separated (default: every one)")
    p.add_argument(
        "--analyses", default=",".join(NLI_ANALYSES), help=f"from {', '.join(NLI_ANALYSES)}"
    )
    p.add_argument(
        "--label-order", default="", help="the model's class names in order, when id2label has none"
    )
    p.add_argument("--finetune-epochs", type=int, default=3, help="paper App. D: 3")
    p.add_argument("--limit-train", type=int, default=None, help="train items per phenomenon")
    p.add_argument("--limit-test", type=int, default=None, help="test items per phenomenon")
    p.set_defaults(handler=run)
