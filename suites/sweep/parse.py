"""Reading a sweep config (TOML, stdlib `tomllib`) into `SweepConfig`, with errors that name
the file, the table and key, the bad value and the fix.

```toml
[sweep]
out = "results/sweep"          # required; relative paths are relative to this file
store = "results/store"        # optional (default OUT/store)
executor = "local"             # local | ray
data = "full"                 # "full" (default), "samples" (shipped) or a data folder
device = "cuda"                # optional
seed = 0                       # global RNG seed at the start of every unit

[[models]]
name = "minilm"                # anything load_subject takes
init = ["pretrained", "random"]
dtype = "float32"              # auto | float32 | float16 | bfloat16
label = "MiniLM"               # optional leaderboard name ("@random" appended for random)

[[suites]]
suite = "holmes"
tasks = ["blimp-adjunct_island", "ewt", {group = "agreement", tasks = ["blimp-a", "blimp-b"]}]
layers = "last"
probe = {seeds = 2}            # optional overrides of [probe] for this entry

[[suites]]
suite = "edge"
task = "conllu:upos"
train = "data/train.conllu"
test = "data/test.conllu"

[probe]                        # seeds, epochs, lr, batch_size, dropout, control, mdl,
seeds = 3                      # fractions, kind
epochs = 5

[limits]                       # train, dev, test, blimp_pairs, sentences
sentences = 20

[resources]                    # cpus, gpus, address, workers_per_model, max_workers
cpus = 1
```
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

from internals.load import BACKENDS
from suites.datasets import FULL, SAMPLES, registry_reference
from suites.sweep.config import (
    DTYPES,
    EXECUTORS,
    INITS,
    RANDOM_SUFFIX,
    EdgeEntry,
    HolmesEntry,
    Limits,
    ModelSpec,
    ProbeSettings,
    Resources,
    SuiteEntry,
    SweepConfig,
    TaskGroup,
)
from suites.sweep.errors import SweepConfigError
from suites.sweep.toml_table import TomlTable, count, flag, integer, number, text

SUITES = ("holmes", "edge")
EDGE_TASKS = ("conllu:upos", "conllu:xpos", "conllu:deprel", "conllu:arc", "jiant", "semeval")


def load_config(path: str | Path) -> SweepConfig:
    """Parse and validate a sweep config file."""
    source = Path(path)
    if not source.is_file():
        raise FileNotFoundError(f"sweep config {source} does not exist; give a TOML file")
    try:
        data = tomllib.loads(source.read_text())
    except tomllib.TOMLDecodeError as error:
        raise SweepConfigError(f"{source}: not valid TOML ({error}); fix the syntax") from error
    return parse_config(data, base=source.resolve().parent, file=str(source))


def parse_config(data: dict[str, Any], *, base: Path, file: str = "<config>") -> SweepConfig:
    """`SweepConfig` from a parsed TOML document; relative paths are taken from `base`."""
    top = TomlTable(data, "the file", file)
    for key in ("sweep", "models", "suites"):
        if key not in data:
            raise SweepConfigError(f"{file}: no [{key}] section; {_SECTION_FIX[key]}")
    sweep = TomlTable(data["sweep"], "[sweep]", file)
    out = sweep.need("out", text, "give the output folder as a string")
    store = sweep.get("store", text, "give the activation store folder as a string")
    executor = sweep.get(
        "executor", lambda v: v in EXECUTORS, f"choose one of {EXECUTORS}", "local"
    )
    data_dir = sweep.get("data", text, 'give "full", "samples" or a data folder as a string')
    device = sweep.get("device", text, "give a torch device such as 'cpu' or 'cuda'")
    seed = sweep.get("seed", integer, "give an integer", 0)
    sweep.finish()
    models = _models(
        top.get(
            "models",
            lambda v: isinstance(v, list) and v != [],
            "give at least one [[models]] table",
        ),
        file,
    )
    probe = _probe(
        top.get("probe", lambda v: isinstance(v, dict), "give a table", {}), "[probe]", file
    )
    suites = _suites(
        top.get(
            "suites",
            lambda v: isinstance(v, list) and v != [],
            "give at least one [[suites]] table",
        ),
        base,
        file,
    )
    limits = _dataclass_table(
        Limits,
        top.get("limits", lambda v: isinstance(v, dict), "give a table", {}),
        "[limits]",
        file,
        count,
        "give a positive integer (or leave the key out for no cap)",
    )
    resources = _resources(
        top.get("resources", lambda v: isinstance(v, dict), "give a table", {}), file
    )
    top.finish(("sweep", "models", "suites", "probe", "limits", "resources"))
    return SweepConfig(
        out=_path(out, base),
        models=models,
        suites=suites,
        store=_path(store, base) if store else None,
        executor=executor,
        data=_data(data_dir, base),
        device=device,
        seed=seed,
        probe=probe,
        limits=limits,
        resources=resources,
        source=Path(file).resolve() if file != "<config>" else None,
    )


_SECTION_FIX = {
    "sweep": 'add [sweep] with out = "FOLDER"',
    "models": 'add a [[models]] table with name = "minilm" (one per model)',
    "suites": 'add a [[suites]] table with suite = "holmes" and tasks = [...]',
}


def _data(value: str | None, base: Path) -> Path | str | None:
    """The `[sweep] data` value: a registry word kept as it is, or a folder resolved."""
    if value is None or value in (FULL, SAMPLES):
        return value
    return _path(value, base)


def _path(value: str, base: Path) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else (base / path).resolve()


def _models(tables: list[Any], file: str) -> tuple[ModelSpec, ...]:
    specs: list[ModelSpec] = []
    for i, data in enumerate(tables):
        table = TomlTable(data, f"[[models]] #{i + 1}", file)
        name = table.need("name", text, "give a model name (minilm, glove:6B.50d, a hub id)")
        init = table.get(
            "init",
            lambda v: (
                v in INITS or (isinstance(v, list) and v != [] and all(x in INITS for x in v))
            ),
            f"give one of {INITS} or a list of them",
            "pretrained",
        )
        dtype = table.get("dtype", lambda v: v in DTYPES, f"choose one of {DTYPES}", "auto")
        label = table.get("label", text, "give a short leaderboard name", name.strip())
        seed = table.get("seed", integer, "give the random-init seed as an integer", 0)
        backend = table.get("backend", lambda v: v in BACKENDS, f"choose one of {BACKENDS}", "auto")
        table.finish()
        for each in [init] if isinstance(init, str) else dict.fromkeys(init):
            suffix = RANDOM_SUFFIX if each == "random" else ""
            specs.append(
                ModelSpec(label.strip() + suffix, name.strip(), each, dtype, seed, backend)
            )
    labels = [s.label for s in specs]
    repeated = sorted({x for x in labels if labels.count(x) > 1})
    if repeated:
        raise SweepConfigError(
            f"{file}: [[models]] give the labels {repeated} twice; set `label` so that each"
            " model (and dtype) has its own"
        )
    return tuple(specs)


def _probe(data: dict[str, Any], where: str, file: str) -> ProbeSettings:
    table = TomlTable(data, where, file)
    seeds = table.get(
        "seeds",
        lambda v: count(v) or (isinstance(v, list) and v != [] and all(integer(x) for x in v)),
        "give how many seeds (a positive integer) or a list of integer seeds",
    )
    fractions = table.get(
        "fractions",
        lambda v: isinstance(v, list) and all(number(x) and x <= 1 for x in v),
        "give a list of train fractions in (0, 1]",
    )
    values = {
        "seeds": tuple(range(seeds))
        if isinstance(seeds, int)
        else (tuple(seeds) if seeds is not None else None),
        "epochs": table.get("epochs", count, "give a positive integer"),
        "lr": table.get("lr", number, "give a positive learning rate"),
        "batch_size": table.get("batch_size", count, "give a positive integer"),
        "dropout": table.get(
            "dropout",
            lambda v: (integer(v) and v == 0) or (isinstance(v, float) and 0 <= v < 1),
            "give a dropout rate in [0, 1)",
        ),
        "control": table.get("control", flag, "give true or false"),
        "mdl": table.get("mdl", flag, "give true or false"),
        "fractions": tuple(float(x) for x in fractions) if fractions is not None else None,
        "kind": table.get("kind", lambda v: v in ("linear", "mlp"), "choose linear or mlp"),
    }
    table.finish(tuple(f.name for f in fields(ProbeSettings)))
    return ProbeSettings(**values)


def _dataclass_table(
    kind: type, data: dict[str, Any], where: str, file: str, check: Callable[[Any], bool], fix: str
) -> Any:
    table = TomlTable(data, where, file)
    names = tuple(f.name for f in fields(kind))
    values = {name: table.get(name, check, fix) for name in names}
    table.finish(names)
    return kind(**values)


def _resources(data: dict[str, Any], file: str) -> Resources:
    table = TomlTable(data, "[resources]", file)
    gpus = table.get(
        "gpus",
        lambda v: v == "auto" or ((integer(v) or isinstance(v, float)) and v >= 0),
        'give "auto" or a number of GPUs per worker (0 = none)',
        "auto",
    )
    values = {
        "cpus": table.get("cpus", count, "give CPU threads per unit (a positive integer)", 1),
        "gpus": None if gpus == "auto" else float(gpus),
        "address": table.get("address", text, 'give a Ray address such as "auto"'),
        "workers_per_model": table.get("workers_per_model", count, "give a positive integer", 1),
        "max_workers": table.get("max_workers", count, "give a positive integer"),
    }
    table.finish(tuple(f.name for f in fields(Resources)))
    return Resources(**values)


def _suites(tables: list[Any], base: Path, file: str) -> tuple[SuiteEntry, ...]:
    entries: list[SuiteEntry] = []
    for i, data in enumerate(tables):
        where = f"[[suites]] #{i + 1}"
        table = TomlTable(data, where, file)
        suite = table.need("suite", lambda v: v in SUITES, f"choose one of {SUITES}")
        probe = _probe(
            table.get(
                "probe",
                lambda v: isinstance(v, dict),
                "give an inline table such as {seeds = 2}",
                {},
            ),
            f"{where} probe",
            file,
        )
        reader = _holmes if suite == "holmes" else _edge
        entries.append(reader(table, probe, base))
    return tuple(entries)


def _holmes(table: TomlTable, probe: ProbeSettings, base: Path) -> HolmesEntry:
    def group_ok(item: Any) -> bool:
        if isinstance(item, str):
            return bool(item.strip())
        return (
            isinstance(item, dict)
            and set(item) == {"group", "tasks"}
            and text(item["group"])
            and isinstance(item["tasks"], list)
            and item["tasks"] != []
            and all(text(t) for t in item["tasks"])
        )

    tasks = table.need(
        "tasks",
        lambda v: isinstance(v, list) and v != [] and all(group_ok(x) for x in v),
        'give a list of task names (or groups such as "ewt") and'
        ' tables {group = "NAME", tasks = [...]}',
    )
    layers = table.get("layers", text, 'give "last", "all" or layers like "0,3,-1"', "last")
    table.finish(("suite", "tasks", "layers", "probe"))
    if probe.kind is not None:
        raise table.fail("probe", "Holmes trains linear probes; drop `kind` here")
    groups = []
    for item in tasks:
        if isinstance(item, str):
            groups.append(TaskGroup(item.strip(), (_task_name(item.strip(), base),)))
        else:
            names = tuple(_task_name(t.strip(), base) for t in item["tasks"])
            groups.append(TaskGroup(item["group"].strip(), names))
    labels = [g.name for g in groups]
    repeated = sorted({n for n in labels if labels.count(n) > 1})
    if repeated:
        raise table.fail("tasks", f"the groups {repeated} appear twice; give each once")
    return HolmesEntry(tuple(groups), layers.strip(), probe)


def _task_name(name: str, base: Path) -> str:
    """A Holmes task name, or the absolute path of a release folder given relative to `base`."""
    folder = base / name
    return str(folder.resolve()) if (folder / "samples.csv").exists() else name


def _edge(table: TomlTable, probe: ProbeSettings, base: Path) -> EdgeEntry:
    task = table.need("task", lambda v: v in EDGE_TASKS, f"choose one of {EDGE_TASKS}")
    if probe.mdl is not None or probe.fractions is not None:
        raise table.fail("probe", "`mdl` and `fractions` are Holmes settings; drop them here")
    files = {}
    for side in ("train", "test"):
        value = table.need(
            side, text, f"give the {side} file (relative to the config file) or DATASET:KEY"
        )
        if registry_reference(value) is not None:
            files[side] = value  # resolved through the dataset registry when the unit runs
            continue
        path = _path(value, base)
        if not path.exists():
            raise table.fail(
                side,
                f"{path} does not exist; give an existing {side} file or a registry reference"
                " such as ud-english-ewt:train",
            )
        files[side] = str(path)
    entry = EdgeEntry(
        name=table.get("name", text, "give a dataset name", task).strip(),
        task=task,
        train=files["train"],
        test=files["test"],
        layers=table.get("layers", text, 'give "all", "last" or layers like "0,3,-1"', "all"),
        probe=probe,
        legacy_keys=table.get("legacy_keys", flag, "give true or false", False),
        pair_pooling=table.get(
            "pair_pooling", lambda v: v in ("mean", "concat"), "choose mean or concat", "mean"
        ),
        balance_binary=table.get("balance_binary", flag, "give true or false", False),
    )
    table.finish()
    return entry
