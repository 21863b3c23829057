"""Suites, sweeps and the command line: bad configs, bad flags, damaged results, a second sweep."""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import sys
from collections.abc import Callable

from datasets import Dataset

from lingprobe.errors import LingprobeError
from probes import TrainConfig
from suites.cli import main
from suites.curriculum import CurriculumConfig, run_curriculum
from suites.datasets import DataSource, UnknownDatasetError
from suites.holmes.catalog import build_task
from suites.outputs import ManifestError, read_manifest
from suites.sweep import SweepConfigError, SweepError, load_config, run_sweep
from suites.sweep.lock import LOCK, sweep_lock
from suites.sweep.records import Records
from suites.tasks import Task, TaskError
from tests.bad_inputs.case import Case, Env

SWEEP = """
[sweep]
out = "out"
data = "samples"

[[models]]
name = "glove:6B.50d"

[[suites]]
suite = "holmes"
tasks = ["blimp-causative"]

[probe]
{probe}

[limits]
blimp_pairs = 10
"""


def sweep_config(probe: str) -> Callable[[Env], object]:
    def run(env: Env) -> object:
        path = env.tmp() / "sweep.toml"
        path.write_text(SWEEP.format(probe=probe))
        return load_config(path)

    return run


class CommandFailed(LingprobeError):
    """The CLI exited 2 (the test re-raises its one line)."""


def cli(*argv: str) -> Callable[[Env], object]:
    """Run `lingprobe ARGV`; its one-line error comes back as an exception to match."""

    def run(env: Env) -> object:
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors):
            code = main([a.replace("TMP", str(env.tmp())) for a in argv])
        lines = errors.getvalue().strip().splitlines()
        if code == 2 and len(lines) == 1:
            raise CommandFailed(lines[0])
        raise AssertionError(f"exit {code}, stderr {lines[-3:]}")

    return run


def crafted_manifest(text: str) -> Callable[[Env], object]:
    def run(env: Env) -> object:
        folder = env.tmp()
        (folder / "manifest.json").write_text(text)
        return read_manifest(folder)

    return run


def damaged_sweep_result(env: Env) -> object:
    """A truncated unit result counts as not done (and is removed), so the unit runs again."""
    folder = env.tmp()
    path = folder / "sweep.toml"
    path.write_text(SWEEP.format(probe="seeds = 1\nepochs = 1\nmdl = false\ncontrol = false"))
    first = run_sweep(path, progress=False)
    result = next((folder / "out" / "results").glob("*.parquet"))
    result.write_bytes(result.read_bytes()[:100])
    assert not Records(folder / "out").is_done(result.stem) and not result.exists()
    again = run_sweep(path, progress=False)
    assert (again.ran, again.done) == (1, 1)
    assert again.leaderboard.equals(first.leaderboard)
    return again


def second_sweep(env: Env) -> object:
    """A second sweep on a folder a live sweep holds is refused, naming the holder."""
    folder = env.tmp()
    with sweep_lock(folder):
        path = folder / "sweep.toml"
        path.write_text(SWEEP.format(probe="").replace('out = "out"', f'out = "{folder}"'))
        return run_sweep(path, progress=False)


def stale_lock(env: Env) -> object:
    """A lock left by a process that no longer runs (same host) is taken over."""
    folder = env.tmp()
    dead = {"host": socket.gethostname(), "pid": 2**22 + 7, "started": "earlier"}
    (folder / LOCK).write_text(json.dumps(dead))
    with sweep_lock(folder):
        held = json.loads((folder / LOCK).read_text())
        assert held["pid"] == os.getpid()
    assert not (folder / LOCK).exists()
    return held


def crafted_report_unknown_suite() -> Callable[[Env], object]:
    def run(env: Env) -> object:
        folder = env.tmp()
        (folder / "manifest.json").write_text('{"suite": "nope"}')
        return cli("report", str(folder))(env)

    return run


def holmes_out_is_file(env: Env) -> object:
    target = env.tmp() / "results.txt"
    target.write_text("not a folder")
    return cli(
        "run",
        "holmes",
        "--models",
        "glove:6B.50d",
        "--tasks",
        "blimp-causative",
        "--data",
        "samples",
        "--out",
        str(target),
    )(env)


def hf_table() -> object:
    return Dataset.from_dict({"sentence": ["A cat."], "label": ["sg"]})


def sweep_retries_negative(env: Env) -> object:
    path = env.tmp() / "sweep.toml"
    path.write_text(
        SWEEP.format(probe="").replace('data = "samples"', 'data = "samples"\nretries = -1')
    )
    return load_config(path)


def sweep_log_to_unknown(env: Env) -> object:
    path = env.tmp() / "sweep.toml"
    given = 'data = "samples"\nlog_to = "neptune"'
    text = SWEEP.format(probe="").replace('data = "samples"', given)
    path.write_text(text)
    return load_config(path)


def tracker_not_installed(env: Env) -> object:
    from unittest import mock

    from suites.trackers import open_tracker

    with mock.patch.dict(sys.modules, {"mlflow": None}):  # as if the extra were not installed
        return open_tracker("mlflow", env.tmp())


def load_limits_zero(env: Env) -> object:
    path = env.tmp() / "sweep.toml"
    path.write_text(SWEEP.format(probe="").replace("blimp_pairs = 10", "train = 0"))
    return load_config(path)


SUITES_CASES = [
    Case(
        "sweep-log-to-unknown",
        'sweep TOML `[sweep] log_to = "neptune"`',
        "SweepConfigError naming the key and the trackers",
        sweep_log_to_unknown,
        SweepConfigError,
        r"\[sweep\] log_to = 'neptune': choose one of \('mlflow', 'wandb'\)",
    ),
    Case(
        "tracker-not-installed",
        "`--log-to mlflow` where MLflow is not installed",
        "TrackerError naming the extra to install, before any unit runs",
        tracker_not_installed,
        LingprobeError,
        r'mlflow is not installed; pip install "lingprobe\[mlflow\]"',
    ),
    Case(
        "sweep-seeds-repeated",
        "sweep TOML `[probe] seeds = [0, 0]`",
        "SweepConfigError naming the entry and ProbeGrid.seeds",
        sweep_config("seeds = [0, 0]"),
        SweepConfigError,
        r"\[\[suites\]\] #1 \(holmes\).*ProbeGrid\.seeds",
    ),
    Case(
        "sweep-seeds-negative",
        "sweep TOML `[probe] seeds = [-1]`",
        "SweepConfigError at parse time",
        sweep_config("seeds = [-1]"),
        SweepConfigError,
        r"seeds",
    ),
    Case(
        "sweep-lr-inf",
        "sweep TOML `[probe] lr = inf`",
        "SweepConfigError: TrainConfig.lr must be finite",
        sweep_config("lr = inf"),
        SweepConfigError,
        r"TrainConfig\.lr=inf",
    ),
    Case(
        "sweep-unknown-setting",
        "sweep TOML `[probe] epoch = 3` (typo)",
        "SweepConfigError with the closest setting",
        sweep_config("epoch = 3"),
        SweepConfigError,
        r"cannot use the probe setting `epoch`; did you mean `epochs`",
    ),
    Case(
        "sweep-retries-negative",
        "sweep TOML `[sweep] retries = -1`",
        "SweepConfigError naming the key and the fix (0 or more)",
        sweep_retries_negative,
        SweepConfigError,
        r"\[sweep\] retries = -1: give how many times a Ray worker that died restarts",
    ),
    Case(
        "sweep-second-on-folder",
        "a second sweep on a folder another sweep is writing",
        "SweepError naming the holder (pid, host) and the lock file",
        second_sweep,
        SweepError,
        r"is being written by another sweep \(pid \d+ on ",
    ),
    Case(
        "sweep-stale-lock",
        "a lock left behind by a sweep that was killed",
        "taken over with a log line; the new sweep runs",
        stale_lock,
        None,
        "",
    ),
    Case(
        "sweep-unit-truncated",
        "a sweep unit's result file truncated on disk",
        "the unit counts as not done and runs again (same leaderboard)",
        damaged_sweep_result,
        None,
        "",
    ),
    Case(
        "report-not-json",
        "`lingprobe report` on a folder whose manifest is not JSON",
        "ManifestError: not a JSON manifest, rerun the command",
        crafted_manifest("{not json"),
        ManifestError,
        r"is not a JSON manifest",
    ),
    Case(
        "report-no-suite",
        "`lingprobe report` on a crafted manifest without a suite",
        "ManifestError: names no suite",
        crafted_manifest('{"units": 3}'),
        ManifestError,
        r"names no suite",
    ),
    Case(
        "report-unknown-suite",
        "`lingprobe report` on a manifest naming a suite that does not exist",
        "exit 2, one line listing what report renders",
        crafted_report_unknown_suite(),
        CommandFailed,
        r"no suite writes 'nope' results",
    ),
    Case(
        "cli-holmes-out-is-file",
        "`lingprobe run holmes --out` naming an existing file",
        "exit 2, one line: give a folder",
        holmes_out_is_file,
        CommandFailed,
        r"is a file; give a folder",
    ),
    Case(
        "cli-holmes-task-typo",
        "`lingprobe run holmes --tasks blimp-adjunct_islnd`",
        "exit 2, one line with the closest task and `lingprobe holmes-tasks`",
        cli(
            "run",
            "holmes",
            "--models",
            "glove:6B.50d",
            "--tasks",
            "blimp-adjunct_islnd",
            "--data",
            "samples",
            "--out",
            "TMP/o",
        ),
        CommandFailed,
        r"did you mean blimp-adjunct_island\? `lingprobe holmes-tasks`",
    ),
    Case(
        "cli-model-typo",
        "`lingprobe run edge --models minlm` (typo)",
        "exit 2, one line (the failed unit's error) with the closest short name and the packaged"
        " models",
        cli(
            "run",
            "edge",
            "--models",
            "minlm",
            "--train-file",
            "ud-english-ewt-sample:train",
            "--test-file",
            "ud-english-ewt-sample:dev",
            "--out",
            "TMP/o",
            "--quiet",
        ),
        CommandFailed,
        r"did you mean minilm\?.*\(minilm, .*glove:6B\.50d\)",
    ),
    Case(
        "cli-curriculum-analysis",
        "`lingprobe run curriculum --analyses bogus`",
        "exit 2, one line listing the analyses",
        cli("run", "curriculum", "--data", "samples", "--analyses", "bogus", "--out", "TMP/o"),
        CommandFailed,
        r"analyses=\('bogus',\): choose from",
    ),
    Case(
        "curriculum-memory-without-store",
        "`run_curriculum(config=...)` with `train.memory` and no store",
        "TaskError naming CurriculumConfig.train.memory and the fix (a store, or no budget)",
        lambda env: run_curriculum(
            {}, env.tmp() / "o", config=CurriculumConfig(train=TrainConfig(memory="4GiB"))
        ),
        TaskError,
        r"CurriculumConfig\.train\.memory='4GiB' bounds the features kept in a store; give a"
        r" store \(store=DIR, --store DIR, a sweep's `store`\) or leave out memory",
    ),
    Case(
        "blimp-path-escape",
        "Holmes task `blimp-../../etc/passwd`",
        "TaskError: an unknown task (names come from the registry, never paths)",
        lambda env: build_task("blimp-../../etc/passwd", "samples"),
        TaskError,
        r"unknown Holmes task 'blimp-\.\./\.\./etc/passwd'",
    ),
    Case(
        "dataset-unknown",
        "a dataset name not in the registry (`ud-englsh-ewt`)",
        "UnknownDatasetError with the closest name",
        lambda env: DataSource().path("ud-englsh-ewt", "train"),
        UnknownDatasetError,
        r"did you mean 'ud-english-ewt'",
    ),
    Case(
        "from-hf-bad-column",
        "`Task.from_hf` with a column that does not exist",
        "TaskError naming the column and listing the real ones",
        lambda env: Task.from_hf(hf_table(), text="sentence", label="tag"),
        TaskError,
        r"column 'tag' \(the label= argument\) is not in the dataset; its columns are",
    ),
    Case(
        "limits-zero",
        "sweep TOML `[limits] train = 0`",
        "OverrideError: give a positive integer",
        lambda env: load_limits_zero(env),
        SweepConfigError,
        r"limits\.train=0: give a positive integer",
    ),
]
