"""Checks every suite of the registry passes (as scikit-learn's `parametrize_with_checks`):
the command line and a sweep give identical rows, the rows conform to the schema, `report`
re-renders what `run` wrote, the config round-trips through the overrides, and
`lingprobe run SUITE --help` has the shared flags with one meaning for every suite."""

from __future__ import annotations

import argparse
import dataclasses
import json
import tomllib

import polars as pl
import pytest

from probes.metric_table import METRICS
from suites.cli import build_parser, main
from suites.commands.run import SHARED, _shown, option, own_fields
from suites.overrides import OverrideError, apply, apply_probe_settings, probe_owners
from suites.plot_style import label
from suites.registry import SUITES
from suites.schema import RESULTS_SCHEMA
from suites.suite import Suite, with_probe
from suites.sweep import load_config, run_sweep
from suites.sweep.errors import SweepConfigError
from suites.sweep.parse import parse_config

# suite -> (its own keys, [probe] keys, [limits] keys): the CLI flags are the same words
TINY = {
    "edge": ({"layers": "last"}, {"seeds": 1, "epochs": 1}, {"sentences": 20}),
    "holmes": (
        {"layers": "last", "tasks": "blimp-causative"},
        {"seeds": 1, "epochs": 1, "mdl": False},
        {"blimp_pairs": 20},
    ),
    "curriculum": (
        {"layers": "last", "phenomena": "boolean", "sizes": "10", "analyses": "inoculation"},
        {"seeds": 1, "epochs": 1},
        {"train": 120, "test": 60},
    ),
    "cc": ({"layers": "last", "features": "length", "n_per_class": 4}, {"seeds": 1}, {}),
    "structural": (
        {"layers": "last", "train_sentences": 20, "dev_sentences": 10, "test_sentences": 20},
        {"seeds": 1, "epochs": 1},
        {},
    ),
}


def test_every_suite_is_checked():
    assert set(TINY) == set(SUITES)


def _flag_value(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def cli_argv(name: str, out) -> list[str]:
    own, probe, limits = TINY[name]
    argv = ["run", name, "--data", "samples", "--out", str(out), "--quiet"]
    for key, value in {**own, **probe}.items():
        if isinstance(value, bool):
            argv.append(option(key) if value else "--no-" + option(key)[2:])
        else:
            argv += [option(key), _flag_value(value)]
    for key, value in limits.items():
        argv += [option(f"limit_{key}"), str(value)]
    return argv


def sweep_text(name: str, out) -> str:
    own, probe, limits = TINY[name]
    listed = {"tasks", "phenomena", "features", "analyses", "sizes"}

    def value(key, v):
        if key in listed:
            return json.dumps([int(x) if x.isdigit() else x for x in str(v).split(",")])
        return json.dumps(v)

    text = f'[sweep]\nout = "{out}"\ndata = "samples"\n\n[[models]]\nname = "minilm"\n\n'
    text += f'[[suites]]\nsuite = "{name}"\n'
    text += "".join(f"{k} = {value(k, v)}\n" for k, v in own.items())
    text += "\n[probe]\n" + "".join(f"{k} = {value(k, v)}\n" for k, v in probe.items())
    text += "\n[limits]\n" + "".join(f"{k} = {v}\n" for k, v in limits.items())
    return text


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TINY))
def test_cli_and_sweep_write_identical_rows_and_report_rerenders(name, tmp_path, capsys):
    assert main(cli_argv(name, tmp_path / "cli")) == 0
    config = tmp_path / "sweep.toml"
    config.write_text(sweep_text(name, tmp_path / "sweep"))
    summary = run_sweep(load_config(config), progress=False)
    assert (summary.planned, summary.failed) == (summary.done, 0)
    by_cli = pl.read_parquet(tmp_path / "cli" / "results.parquet")
    by_sweep = pl.read_parquet(tmp_path / "sweep" / "results.parquet")
    assert by_cli.columns == list(RESULTS_SCHEMA) and by_cli.height > 0
    assert set(by_cli["suite"]) == {name}
    assert by_cli.equals(by_sweep)  # same unit ids too: the same settings hash
    # rerunning resumes: nothing runs again
    assert main(cli_argv(name, tmp_path / "cli")) == 0
    log = (tmp_path / "cli" / "sweep-log.jsonl").read_text().splitlines()
    started = [line for line in log if json.loads(line)["event"] == "start"]
    assert len(started) == summary.planned  # the rerun started no unit
    # `report` re-renders what `run` wrote
    (tmp_path / "cli" / "leaderboard.parquet").unlink()
    unit = next((tmp_path / "cli" / "units").iterdir())
    assert main(["report", str(tmp_path / "cli")]) == 0
    assert main(["report", str(unit)]) == 0
    assert pl.read_parquet(tmp_path / "cli" / "leaderboard.parquet").height > 0


@pytest.mark.parametrize("name", sorted(SUITES))
def test_config_round_trips_through_the_overrides(name):
    suite = SUITES[name]
    config = suite.config_type()
    own = {key: _shown(getattr(config, key)) for key in own_fields(suite)}
    own = {k: ("none" if v == "None" else v) for k, v in own.items()}
    assert apply(config, own) == config  # every default, written as a flag, reads back
    for owner in type(config).probe_fields:
        settings = getattr(config, owner)
        shown = {f.name: _shown(getattr(settings, f.name)) for f in dataclasses.fields(settings)}
        shown = {
            k: ("none" if v == "None" else v)
            for k, v in shown.items()
            if k in probe_owners(config)
            and k != "seeds"
            and not dataclasses.is_dataclass(getattr(settings, k))  # (MDL blocks: TOML only)
        }
        assert apply(settings, shown) == settings


def _run_parsers() -> dict[str, argparse.ArgumentParser]:
    top = build_parser()
    (commands,) = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    run = commands.choices["run"]
    (suites,) = [a for a in run._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(suites.choices)


def test_every_suite_has_the_shared_flags_with_one_meaning():
    parsers = _run_parsers()
    assert set(parsers) == set(SUITES)
    meanings: dict[str, set[str]] = {}
    for parser in parsers.values():
        flags = {s: a for a in parser._actions for s in a.option_strings}
        for name in SHARED:
            action = flags[option(name)]
            meanings.setdefault(name, set()).add(str(action.help).split(" (default")[0])
    assert all(len(texts) == 1 for texts in meanings.values()), meanings


def test_seeds_is_a_count_or_a_list_everywhere():
    for name in SUITES:
        suite = SUITES[name]
        config = suite.config_type()
        owner = probe_owners(config)["seeds"]
        for given, seeds in (("3", (0, 1, 2)), ("0,1,2", (0, 1, 2)), ("4,7", (4, 7))):
            changed = apply_probe_settings(config, {"seeds": given}, name)
            held = getattr(changed, owner) if owner else changed
            assert tuple(held.seeds) == seeds


PROBE_FOR_ALL = """
[sweep]
out = "out"
data = "samples"

[[models]]
name = "minilm"

[[suites]]
suite = "holmes"
tasks = ["blimp-causative"]
layers = "last"

[[suites]]
suite = "edge"
layers = "last"

[[suites]]
suite = "curriculum"
layers = "last"

[[suites]]
suite = "cc"
layers = "last"

[[suites]]
suite = "structural"
layers = "last"

[probe]
seeds = 2
"""


def test_layers_and_probe_apply_to_every_suite(tmp_path):
    config = parse_config(tomllib.loads(PROBE_FOR_ALL), base=tmp_path)
    for entry in config.suites:
        owner = probe_owners(entry.config)["seeds"]
        held = getattr(entry.config, owner) if owner else entry.config
        assert tuple(held.seeds) == (0, 1), entry.suite
        assert entry.config.layers == "last"


def test_a_probe_key_a_suite_cannot_use_names_the_suite_and_the_key(tmp_path):
    text = PROBE_FOR_ALL + "mdl = false\n"
    with pytest.raises(SweepConfigError, match=r"cc.*`mdl`"):
        parse_config(tomllib.loads(text), base=tmp_path)
    with pytest.raises(OverrideError, match="cannot use the probe setting `kind`"):
        with_probe(SUITES["structural"].config_type(), kind="mlp")


def test_headline_metrics_and_plot_labels_read_the_metric_table():
    for suite in SUITES.values():
        assert set(suite.headline_metrics) <= set(METRICS), suite.name
    with pytest.raises(TypeError, match=r"headline_metrics: \['f1'\] are not in probes.metric"):
        type("Unknown", (Suite,), {"headline_metrics": ("f1",)})
    for name, record in METRICS.items():
        assert label(name) == record.label
    assert label("n_per_label") == "training examples per label"  # other columns: LABELS
