"""What a run's manifest records so that a figure can be traced months later to what made it.

`environment()`: the command line, lingprobe's version and git commit (when run from a
checkout), the versions of the libraries that decide the numbers, Python, the platform and the
accelerator. `model_record(subject)`: a model's name, init, kind, width, its content key (the
hashes of its weights and config, or the hub revision it resolved to) and device.
`dataset_record(name, files)`: a dataset's registry name and every file's sha256 and size.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import torch

from internals import Subject
from lingprobe import __version__
from suites.datasets.integrity import sha256_of
from suites.tasks import Task

LIBRARIES = (
    "torch",
    "transformers",
    "nnsight",
    "transformer-lens",
    "numpy",
    "polars",
    "scikit-learn",
    "scipy",
)


def library_versions() -> dict[str, str | None]:
    """Installed versions of the libraries that decide lingprobe's numbers (None if absent)."""
    found: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def git_commit() -> str | None:
    """The commit of the checkout lingprobe runs from (None for an installed wheel)."""
    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}{'+changes' if dirty else ''}"


def device_description() -> str:
    """The accelerator torch sees (CPU when none)."""
    if torch.cuda.is_available():
        names = {torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())}
        return f"cuda x{torch.cuda.device_count()} ({', '.join(sorted(names))})"
    return f"cpu ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"


def environment(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """The command, versions, commit, Python, platform and device of this process."""
    return {
        "command": list(argv) if argv is not None else list(sys.argv),
        "lingprobe": __version__,
        "git_commit": git_commit(),
        "libraries": library_versions(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "device": device_description(),
    }


def model_record(subject: Subject, *, label: str | None = None) -> dict[str, Any]:
    """A model as the manifest records it."""
    model = getattr(subject, "model", None)
    first = next(iter(model.parameters()), None) if model is not None else None
    return {
        "label": label or subject.name,
        **subject.describe(),
        "content_key": subject.content_key(),
        "device": str(first.device) if first is not None else "cpu",
        "dtype": str(first.dtype).removeprefix("torch.") if first is not None else None,
    }


def dataset_record(name: str, files: Sequence[Path], items: int | None = None) -> dict[str, Any]:
    """A dataset (registry name or a label) with every file's sha256 and size."""
    return {
        "name": name,
        "files": [
            {"path": str(f), "sha256": sha256_of(Path(f)), "bytes": Path(f).stat().st_size}
            for f in files
        ],
        "items": items,
    }


def task_record(task: Task) -> dict[str, Any]:
    """A task's name, items per split, and its source files with their sha256 (where files)."""
    sources = [
        Path(p.strip()) for p in str(task.metadata.get("source", "")).split(",") if p.strip()
    ]
    return {
        "name": task.name,
        "items": {s: task.split(s).height for s in ("train", "dev", "test")},
        "files": [
            {"path": str(p), "sha256": sha256_of(p), "bytes": p.stat().st_size}
            for p in sources
            if p.is_file()
        ],
    }


def describe_manifest(manifest: dict[str, Any]) -> str:
    """A few lines saying which run made a folder: command, times, versions, models, data."""
    env = manifest.get("environment") or {}
    libraries = env.get("libraries") or {}
    lines = [
        f"run: {manifest.get('suite')} ({manifest.get('status', 'unknown status')}),"
        f" started {manifest.get('started', '?')}, finished {manifest.get('finished') or '-'}",
        f"command: {' '.join(env.get('command', [])) or '?'}",
        f"lingprobe {env.get('lingprobe', '?')} (commit {env.get('git_commit') or 'n/a'}),"
        + ", ".join(f" {k} {v}" for k, v in libraries.items() if k in ("torch", "transformers")),
        f"device: {env.get('device', '?')}",
    ]
    for model in manifest.get("models") or []:
        if isinstance(model, dict):
            key = str(model.get("content_key", ""))[:16]
            lines.append(
                f"model: {model.get('label', model.get('name'))} ({model.get('init')}; key {key})"
            )
        else:
            lines.append(f"model: {model}")
    for data in manifest.get("data") or []:
        files = data.get("files", []) if isinstance(data, dict) else []
        digest = ", ".join(f"{Path(f['path']).name} {f['sha256'][:12]}" for f in files)
        lines.append(f"data: {data.get('name') if isinstance(data, dict) else data} ({digest})")
    return "\n".join(lines)
