"""Sweep config files: the schema, defaults, and errors that name the key and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from probes import ProbeGrid, TrainConfig
from suites.edge.experiment import EdgeConfig
from suites.holmes.run import HolmesConfig
from suites.suite import TaskGroup
from suites.sweep import SweepConfigError, load_config, parse_config
from suites.sweep.toml_table import TomlTable

FULL = """
[sweep]
out = "results/sweep"
store = "/tmp/lingprobe-store"
executor = "ray"
device = "cpu"
retries = 3

[[models]]
name = "minilm"
init = ["pretrained", "random"]
dtype = "float32"

[[models]]
name = "glove:6B.50d"
label = "GloVe"

[[suites]]
suite = "holmes"
tasks = ["blimp-adjunct_island", "ewt", {group = "agreement", tasks = ["blimp-a", "blimp-b"]}]
layers = "0,-1"
probe = {seeds = [7], train_fractions = [0.5]}

[[suites]]
suite = "edge"
task = "conllu:upos"
train_file = "train.conllu"
test_file = "test.conllu"
probe = {kind = "mlp", dropout = 0.3}

[probe]
seeds = 3
epochs = 5
lr = 0.01
control = false

[limits]
blimp_pairs = 60
sentences = 20

[resources]
cpus = 2
gpus = 0
workers_per_model = 2
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "train.conllu").write_text("")
    (tmp_path / "test.conllu").write_text("")
    return tmp_path


def write(folder: Path, text: str) -> Path:
    path = folder / "sweep.toml"
    path.write_text(text)
    return path


def test_full_schema_is_read(folder):
    config = load_config(write(folder, FULL))
    assert config.out == folder / "results" / "sweep"  # relative to the config file
    assert config.store == Path("/tmp/lingprobe-store") and config.store_path == config.store
    assert (config.executor, config.device, config.retries) == ("ray", "cpu", 3)
    assert [m.label for m in config.models] == ["minilm", "minilm@random", "GloVe"]
    assert [m.init for m in config.models] == ["pretrained", "random", "pretrained"]
    assert config.models[0].dtype == "float32" and config.models[2].dtype == "auto"
    (holmes_entry, edge_entry) = config.suites
    assert (holmes_entry.suite, edge_entry.suite) == ("holmes", "edge")
    holmes, edge = holmes_entry.config, edge_entry.config
    assert isinstance(holmes, HolmesConfig) and isinstance(edge, EdgeConfig)
    assert holmes.groups == (
        TaskGroup("blimp-adjunct_island", ("blimp-adjunct_island",)),
        TaskGroup("ewt", ("ewt",)),
        TaskGroup("agreement", ("blimp-a", "blimp-b")),
    )
    # the entry's probe over the sweep's [probe] over the suite's own defaults
    assert holmes.layers == "0,-1" and holmes.grid.seeds == (7,)
    assert holmes.fractions == (1.0, 0.5) and holmes.grid.control is False
    assert (holmes.train.epochs, holmes.train.lr) == (5, 0.01)
    assert edge.train_file == str(folder / "train.conllu") and edge.task == "conllu:upos"
    assert edge.layers == "all" and edge.grid.kind == "mlp" and edge.train.dropout == 0.3
    assert edge.grid.seeds == (0, 1, 2) and edge.train.epochs == 5
    assert (holmes.limits.blimp_pairs, holmes.limits.sentences, holmes.limits.train) == (
        60,
        20,
        None,
    )
    assert edge.limits == holmes.limits
    assert (config.resources.cpus, config.resources.gpus) == (2, 0.0)
    assert config.resources.workers_per_model == 2 and config.resources.address is None


def test_defaults(tmp_path):
    config = parse_config(
        {
            "sweep": {"out": "o"},
            "models": [{"name": "minilm"}],
            "suites": [{"suite": "holmes", "tasks": ["upos"]}],
        },
        base=tmp_path,
    )
    assert config.executor == "local" and config.store_path == tmp_path / "o" / "store"
    assert config.retries == 2  # a Ray worker whose process or node dies restarts twice
    holmes = config.suites[0].config
    assert holmes.grid == HolmesConfig().grid and holmes.train == TrainConfig()
    assert config.resources.cpus == 1
    assert config.resources.gpus is None  # auto: 1 per worker when the Ray cluster has GPUs
    assert holmes.layers == "last" and isinstance(holmes.grid, ProbeGrid)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("[probe]\nseeds = 3", "[probe]\nseed = 3"),
            r"#1 \(holmes\): the holmes suite cannot use the probe setting `seed`; did you mean"
            r" `seeds`",
        ),
        (("seeds = 3", 'seeds = "x"'), r"seeds='x': give an integer"),
        (
            ('executor = "ray"', 'executor = "slurm"'),
            r"executor = 'slurm': choose one of \('local', 'ray'\)",
        ),
        (
            ('executor = "ray"', 'executor = "ray"\nlog_to = "neptune"'),
            r"\[sweep\] log_to = 'neptune': choose one of \('mlflow', 'wandb'\)",
        ),
        (("retries = 3", "retries = -1"), r"\[sweep\] retries = -1: give how many times"),
        (("retries = 3", "retries = 1.5"), r"\[sweep\] retries = 1.5: give how many times"),
        (('dtype = "float32"', 'dtype = "fp8"'), r"\[\[models\]\] #1 dtype = 'fp8': choose one of"),
        (('init = ["pretrained", "random"]', 'init = "trained"'), r"#1 init = 'trained'"),
        (('suite = "edge"', 'suite = "senteval"'), r"\[\[suites\]\] #2 suite = 'senteval': choose"),
        (
            ('train_file = "train.conllu"', 'train_file = "missing.conllu"'),
            r"missing.conllu does not exist",
        ),
        (('task = "conllu:upos"', 'task = "conllu:pos"'), r"task='conllu:pos': choose one of"),
        (('label = "GloVe"', 'label = "minilm"'), r"labels \['minilm'\] twice; set `label`"),
        (
            ('probe = {kind = "mlp", dropout = 0.3}', 'probe = {kind = "cnn"}'),
            r"#2 \(edge\): kind='cnn': choose one of \['linear', 'mlp', 'mass_mean', .*\]",
        ),
        (
            ('probe = {kind = "mlp", dropout = 0.3}', "probe = {lr = inf}"),
            r"#2 \(edge\): TrainConfig.lr=inf",
        ),
        (('out = "results/sweep"', ""), r"\[sweep\] lacks `out`"),
        (("gpus = 0", "gpus = -1"), r"\[resources\] gpus = -1"),
        (("sentences = 20", "sentences = 0"), r"limits.sentences=0: give a positive integer"),
        (
            (
                'tasks = ["blimp-adjunct_island"',
                'tasks = ["blimp-adjunct_island", "blimp-adjunct_island"',
            ),
            r"groups \['blimp-adjunct_island'\] appear twice",
        ),
    ],
)
def test_errors_name_the_key_and_the_fix(folder, change, message):
    old, new = change
    assert old in FULL
    with pytest.raises(SweepConfigError, match=message):
        load_config(write(folder, FULL.replace(old, new, 1)))


def test_missing_sections_and_bad_toml(folder):
    with pytest.raises(SweepConfigError, match=r"no \[models\] section; add a \[\[models\]\]"):
        load_config(write(folder, '[sweep]\nout = "o"\n'))
    with pytest.raises(SweepConfigError, match="not valid TOML"):
        load_config(write(folder, "[sweep\n"))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_config(folder / "nothing.toml")


def test_table_reports_unknown_keys_without_a_close_match():
    table = TomlTable({"zzz": 1}, "[limits]", "f.toml")
    with pytest.raises(SweepConfigError, match="unknown key `zzz`; known keys: train, dev"):
        table.finish(("train", "dev"))
