"""Sweep configs for the tests: MiniLM and GloVe on two tiny BLiMP paradigms and EWT UPOS,
all from the data shipped with lingprobe (`data = "samples"`)."""

from __future__ import annotations

from pathlib import Path

import pytest

HOLMES_TASKS = ["blimp-adjunct_island", "blimp-anaphor_number_agreement"]


def sweep_toml(
    out: Path,
    *,
    models: tuple[str, ...] = ("minilm", "glove:6B.50d"),
    executor: str = "local",
    edge: bool = True,
    holmes_tasks: list[str] | None = None,
) -> str:
    """A small sweep: 2 models x (2 BLiMP paradigms x 60 pairs + EWT UPOS on 20 sentences)."""
    tasks = ", ".join(f'"{t}"' for t in (holmes_tasks or HOLMES_TASKS))
    text = f'[sweep]\nout = "{out}"\nexecutor = "{executor}"\ndata = "samples"\n\n'
    text += "".join(f'[[models]]\nname = "{m}"\n\n' for m in models)
    text += f'[[suites]]\nsuite = "holmes"\ntasks = [{tasks}]\nlayers = "last"\n\n'
    if edge:
        text += (
            '[[suites]]\nsuite = "edge"\ntask = "conllu:upos"\nname = "ewt-upos"\n'
            'train_file = "ud-english-ewt:train"\ntest_file = "ud-english-ewt:dev"\n'
            'layers = "last"\n\n'
        )
    text += "[probe]\nseeds = 2\nepochs = 2\nlr = 0.01\nmdl = false\n\n"
    text += "[limits]\nblimp_pairs = 60\nsentences = 20\n"
    return text


def write_sweep(folder: Path, name: str, **options) -> Path:
    """Write a sweep config `folder/name.toml` whose output is `folder/name`."""
    path = folder / f"{name}.toml"
    path.write_text(sweep_toml(folder / name, **options))
    return path


@pytest.fixture(scope="session")
def local_sweep(tmp_path_factory):
    """The small sweep run once with the local executor: (config path, summary)."""
    from suites.sweep import run_sweep

    folder = tmp_path_factory.mktemp("sweep")
    config = write_sweep(folder, "local")
    return config, run_sweep(config, progress=False)


@pytest.fixture(scope="session")
def ray_instance():
    """A local Ray instance with 2 CPUs for the Ray executor's tests."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
