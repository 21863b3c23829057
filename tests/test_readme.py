"""Every command and the script in README.md run here, with tiny limits appended, so the README
cannot go false again (issue 14). Limits are appended flags: argparse keeps the last value."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import polars as pl
import pytest

from suites.cli import build_parser, main
from tests.suites.holmes.leaderboards import write_leaderboards

README = Path(__file__).resolve().parents[1] / "README.md"
QUIET = ["--quiet"]
PROBE = "--seeds 1 --epochs 1"
SAMPLES = "--data samples"
LIMITS = {
    key: shlex.split(flags)
    for key, flags in {
        "demo": f"--limit-sentences 40 --layers 0,6 {PROBE}",
        "run edge": f"{SAMPLES} --limit-sentences 30 --layers 0,6 {PROBE}",
        "run holmes": f"{SAMPLES} --limit-blimp-pairs 20 --limit-sentences 30 {PROBE} --no-mdl"
        " --tasks blimp-causative,upos",
        "run cc": "--n-per-class 4 --features length",
        "cc-semantics": "--n-instances 3",
        "run curriculum": f"{SAMPLES} --sizes 10 --seeds 1 --epochs 1 --analyses inoculation"
        " --layers last --limit-train 60 --limit-test 30",
        "run structural": f"{SAMPLES} --train-sentences 20 --dev-sentences 10"
        " --test-sentences 20 --epochs 1 --layers 0,6",
        "amnesic": f"{SAMPLES} --sentences 30 --texts 4 --layers 6",
    }.items()
}
QUIET_COMMANDS = set(LIMITS) | {"holmes-published"}
NETWORK = ("data fetch", "data path")  # they download the full data: refused offline, clearly


def readme_blocks(language: str) -> list[str]:
    """The README's fenced code blocks in `language`."""
    text = README.read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def readme_commands() -> list[list[str]]:
    """Every `lingprobe ...` line of the README's bash blocks, as argv (comments dropped)."""
    commands = []
    for block in readme_blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == ["lingprobe"]:
                commands.append(words[1:])
            elif words[:3] == ["python3", "noxfile.py", "-s"] and "--" in words:
                commands.append(["demo", *words[words.index("--") + 1 :]])  # nox posargs
    return commands


def command_key(argv: list[str]) -> str:
    return " ".join(argv[:2]) if argv[0] in ("run", "data") else argv[0]


COMMANDS = readme_commands()


def test_the_readme_names_every_suite_command():
    keys = {command_key(c) for c in COMMANDS}
    assert {"demo", "report", "sweep", "data list", "data fetch", "holmes-published"} <= keys
    assert {k for k in LIMITS if k.startswith("run ")} <= keys


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(c)[:60] for c in COMMANDS])
def test_every_readme_command_parses(argv):
    parsed = build_parser().parse_args(argv)
    assert callable(parsed.handler)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return tmp_path_factory.mktemp("readme")


def _localised(argv: list[str], root: Path) -> list[str]:
    return [str(root / a) if a.startswith("results/") else a for a in argv]


RUNNABLE = [
    c for c in COMMANDS if command_key(c) not in ("sweep", "report", *NETWORK) and "full" not in c
]


@pytest.mark.slow
@pytest.mark.parametrize("argv", RUNNABLE, ids=[" ".join(c)[:60] for c in RUNNABLE])
def test_every_readme_command_runs_with_tiny_limits(argv, results, tmp_path, capsys):
    key = command_key(argv)
    extra = list(LIMITS.get(key, []))
    if key in QUIET_COMMANDS:
        extra += QUIET
    if key == "holmes-published":
        holmes, flash = write_leaderboards(tmp_path)
        extra += ["--leaderboard", str(holmes), "--flash-leaderboard", str(flash)]
    assert main([*_localised(argv, results), *extra]) == 0
    out = next((a for a in _localised(argv, results) if str(results) in a), None)
    if out is not None:
        manifest = Path(out) / "manifest.json"
        assert manifest.exists(), f"{' '.join(argv)} wrote no manifest"


@pytest.mark.slow
def test_readme_report_rerenders_the_edge_run(results, capsys):
    edge = next(c for c in RUNNABLE if command_key(c) == "run edge")
    out = results / "results" / "edge"
    if not (out / "manifest.json").exists():
        assert main([*_localised(edge, results), *LIMITS["run edge"], *QUIET]) == 0
    (out / "edge" / "all_scores.parquet").unlink()
    (report,) = [c for c in COMMANDS if command_key(c) == "report"]
    assert main(_localised(report, results)) == 0
    assert pl.read_parquet(out / "edge" / "all_scores.parquet").height > 0
    assert "run: sweep (done)" in capsys.readouterr().out


OFFLINE = [c for c in COMMANDS if command_key(c) in NETWORK]


@pytest.mark.parametrize("argv", OFFLINE, ids=[" ".join(c) for c in OFFLINE])
def test_readme_downloads_without_network_say_how_to_get_the_data(argv, capsys, monkeypatch):
    monkeypatch.setenv("LINGPROBE_DATA_MIRROR", "http://127.0.0.1:9/")  # nothing listens there
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot download" in err[0] and "LINGPROBE_DATA" in err[0]


@pytest.mark.slow
def test_readme_sweep_config_plans_and_runs(results, capsys):
    (toml,) = [b for b in readme_blocks("toml") if "[sweep]" in b]
    small = toml.replace('out = "results/sweep"', f'out = "{results / "sweep"}"\ndata = "samples"')
    small = small.replace(
        "seeds = 3",
        "seeds = 1\nepochs = 1\nmdl = false\n\n[limits]\nblimp_pairs = 20\nsentences = 30",
    )
    config = results / "sweep.toml"
    config.write_text(small)
    for argv in (c for c in COMMANDS if command_key(c) == "sweep"):
        assert main([argv[0], str(config), *argv[2:]]) == 0
    board = pl.read_parquet(results / "sweep" / "leaderboard.parquet")
    assert board["model"].n_unique() == 3  # minilm, its twin, glove


def test_readme_script_runs(tmp_path, monkeypatch):
    (script,) = [b for b in readme_blocks("python") if "fit_probes(" in b and "lazy" not in b]
    monkeypatch.chdir(tmp_path)
    names: dict[str, object] = {}
    exec(compile(script.replace("range(5)", "range(2)"), "README.md", "exec"), names)
    selectivity = names["result"].selectivity()  # type: ignore[attr-defined]
    assert selectivity.height > 0
    assert (tmp_path / "cache").is_dir()
