"""Planning: units per (model, dataset group), stable ids, model grouping, cost table."""

from __future__ import annotations

from dataclasses import replace

import polars as pl
import pytest

from suites.cli import main
from suites.suite import with_probe
from suites.sweep import SweepConfigError, by_model, load_config, plan_units
from suites.sweep.config import Resources
from suites.sweep.cost import plan_table
from suites.sweep.executor_ray import capacity, gpus_per_worker
from suites.sweep.plan import check_tasks
from tests.suites.sweep.conftest import write_sweep


@pytest.fixture
def config(tmp_path):
    return load_config(write_sweep(tmp_path, "plan"))


def test_units_are_models_times_groups_with_stable_ids(config):
    units = plan_units(config)
    assert len(units) == 2 * 3
    assert [u.title for u in units[:3]] == [
        "minilm · holmes · blimp-adjunct_island",
        "minilm · holmes · blimp-anaphor_number_agreement",
        "minilm · edge · ewt-upos",
    ]
    assert units[3].id.startswith("glove_6B.50d__holmes__blimp-adjunct_island__")
    assert [u.id for u in plan_units(config)] == [u.id for u in units]  # same settings, same ids
    assert len({u.id for u in units}) == 6
    grouped = by_model(list(reversed(units)))
    assert [m.label for m, _ in grouped] == ["glove:6B.50d", "minilm"]
    assert all(len(group) == 3 and {u.model for u in group} == {m} for m, group in grouped)


def entry_with(entry, **changes):
    """A suite entry whose config has `changes` (config fields or probe settings)."""
    fields = {k: v for k, v in changes.items() if hasattr(entry.config, k)}
    probe = {k: v for k, v in changes.items() if k not in fields}
    config = replace(entry.config, **fields)
    return replace(entry, config=with_probe(config, **probe) if probe else config)


def test_ids_change_with_what_decides_the_numbers(config):
    before = {u.title: u.id for u in plan_units(config)}
    more_seeds = replace(
        config, suites=tuple(entry_with(e, seeds=(0, 1, 2)) for e in config.suites)
    )
    assert not set(before.values()) & {u.id for u in plan_units(more_seeds)}
    other_out = replace(config, out=config.out.parent / "elsewhere", executor="ray")
    assert {u.id for u in plan_units(other_out)} == set(before.values())
    holmes, edge = config.suites
    deeper = replace(config, suites=(entry_with(holmes, layers="all"), edge))
    after = {u.title: u.id for u in plan_units(deeper)}
    assert after["minilm · edge · ewt-upos"] == before["minilm · edge · ewt-upos"]
    assert (
        after["minilm · holmes · blimp-adjunct_island"]
        != before["minilm · holmes · blimp-adjunct_island"]
    )


def test_a_group_is_one_unit(config):
    holmes = config.suites[0]
    grouped = entry_with(
        holmes,
        groups=(
            replace(
                holmes.config.groups[0],
                name="two",
                tasks=("blimp-adjunct_island", "blimp-anaphor_number_agreement"),
            ),
        ),
    )
    units = plan_units(replace(config, suites=(grouped,)))
    assert [u.group.tasks for u in units] == [
        ("blimp-adjunct_island", "blimp-anaphor_number_agreement")
    ] * 2
    table = plan_table(replace(config, suites=(grouped,)), units[:1])
    row = table.row(0, named=True)
    assert (row["datasets"], row["items"], row["status"]) == (2, 2 * 120, "to run")
    assert row["probes_per_site"] == 2 * 2  # seeds x (task, control)
    assert row["est_seconds"] is None  # no finished unit of the model yet


def test_unknown_task_names_are_refused_before_any_model_loads(config):
    holmes, edge = config.suites
    first = holmes.config.groups[0]
    typo = entry_with(holmes, groups=(replace(first, tasks=("blimp-adjunct_islnd",)),))
    with pytest.raises(SweepConfigError, match=r"'blimp-adjunct_islnd'; did you mean"):
        check_tasks(replace(config, suites=(typo, edge)))
    fine = entry_with(holmes, groups=(replace(first, tasks=("ewt",)),))
    check_tasks(replace(config, suites=(fine,)))  # a group name is fine


def test_entry_probe_settings_override_the_sweep_ones(tmp_path):
    text = write_sweep(tmp_path, "entry").read_text()
    text = text.replace('layers = "last"\n', 'layers = "last"\nprobe = {seeds = [5]}\n', 1)
    (tmp_path / "entry.toml").write_text(text)
    units = plan_units(load_config(tmp_path / "entry.toml"))
    assert units[0].config.grid.seeds == (5,) and units[0].config.train.epochs == 2
    assert units[2].config.grid.seeds == (0, 1)


def test_ray_resources():
    cluster = {"CPU": 16.0, "GPU": 4.0}
    assert gpus_per_worker(Resources(), cluster) == 1.0
    assert gpus_per_worker(Resources(), {"CPU": 2.0}) == 0.0
    assert gpus_per_worker(Resources(gpus=0.5), cluster) == 0.5
    assert capacity(Resources(cpus=2), cluster, 1.0) == 4  # GPUs bound it
    assert capacity(Resources(cpus=2), cluster, 0.0) == 8
    assert capacity(Resources(cpus=4), {"CPU": 2.0}, 0.0) == 1
    assert capacity(Resources(max_workers=3), cluster, 1.0) == 3


def test_dry_run_prints_the_plan_and_runs_nothing(tmp_path, capsys):
    path = write_sweep(tmp_path, "dry")
    assert main(["sweep", str(path), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "6 units: 0 done, 0 failed, 6 to run" in printed
    assert "estimated time: unknown" in printed and "ewt-upos" in printed
    assert not (tmp_path / "dry").exists()
    table = plan_table(load_config(path), plan_units(load_config(path)))
    assert table.filter(pl.col("suite") == "holmes")["items"].to_list() == [120] * 4
