"""The built wheel, installed non-editable into a fresh virtual environment, runs.

Every test environment installs lingprobe editable, which hides packaging mistakes (a module or
a data file missing from the wheel). This builds the wheel (`pip wheel`, hatchling in pip's
isolated build environment), checks what it holds, installs it with `--no-deps` into a fresh
venv that also sees this environment's installed dependencies (a `.pth` line naming its
site-packages: read after the venv's own, and without running that folder's `.pth` files, so
the editable install of the test environment stays out), and from a folder outside the clone
runs `lingprobe data list` and a tiny demo, checking that every package is imported
from the installed wheel, not from the source tree.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("lingprobe", "internals", "probes", "suites")


def run(command: list[str | Path], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.mark.slow
def test_the_wheel_installed_in_a_fresh_venv_lists_data_and_runs_a_tiny_demo(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env["LINGPROBE_DATA"] = str(tmp_path / "no-data")  # the shipped samples only
    dist = tmp_path / "dist"
    pip = [sys.executable, "-m", "pip"]
    run([*pip, "wheel", "--no-deps", "--quiet", "-w", dist, ROOT], tmp_path, env)
    (wheel,) = dist.glob("lingprobe-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for package in PACKAGES:
        assert f"{package}/__init__.py" in names and f"{package}/py.typed" in names
    assert any(n.startswith("suites/datasets/embedded/") for n in names)  # package data
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)

    home = tmp_path / "venv"
    venv.create(home, with_pip=False)
    python = home / "bin" / "python"
    site = run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path, env
    )
    (Path(site.strip()) / "test_environment.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n"
    )
    run([*pip, "--python", python, "install", "--no-deps", "--quiet", wheel], tmp_path, env)
    work = tmp_path / "elsewhere"  # not the clone: the source tree must not be importable
    work.mkdir()
    where = run(
        [
            python,
            "-c",
            "import lingprobe, internals, probes, suites as s; print(*("
            "m.__file__ for m in (lingprobe, internals, probes, s)), sep='\\n')",
        ],
        work,
        env,
    ).split()
    site = run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], work, env
    )
    for path in where:
        assert Path(path).is_relative_to(Path(site.strip())), f"{path} is not from the wheel"

    listed = run([home / "bin" / "lingprobe", "data", "list"], work, env)
    assert "ud-english-ewt" in listed
    demo = [home / "bin" / "lingprobe", "demo", "--out", work / "demo", "--quiet"]
    demo += ["--limit-sentences", "40", "--seeds", "1"]
    demo += ["--epochs", "2", "--layers", "0,6"]
    printed = run(demo, work, env)
    assert "Pretrained vs random per layer" in printed
    assert (work / "demo" / "report.html").is_file()
