"""Sweep configs for the tests: MiniLM and GloVe on two tiny BLiMP paradigms and EWT UPOS,
all from the data shipped with lingprobe (`data = "samples"`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

LOOPBACK = "127.0.0.1"

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


@contextmanager
def loopback_ray() -> Iterator[None]:
    """Ray processes started inside advertise and dial 127.0.0.1, not the machine's address:
    Ray takes the loopback address where it is told the machine is not a cluster machine (the
    variable reaches every process Ray starts; the constant, this driver)."""
    from ray._private import ray_constants

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        patch.setattr(ray_constants, "ENABLE_RAY_CLUSTER", False)
        yield


@pytest.fixture(scope="module")
def ray_instance():
    """A local Ray instance with 2 CPUs on 127.0.0.1 for one module of Ray executor tests (the
    cluster test starts its own Ray, so none may outlive its module)."""
    ray = pytest.importorskip("ray")
    with loopback_ray():
        ray.init(
            address="local",  # a new instance, whatever cluster this machine has
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            _node_ip_address=LOOPBACK,
        )
        yield
        ray.shutdown()
