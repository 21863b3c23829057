"""Reading a sweep config (TOML, stdlib `tomllib`) into `SweepConfig`, with errors that name
the file, the table and key, the bad value and the fix.

```toml
[sweep]
out = "results/sweep"          # required; relative paths are relative to this file
store = "results/store"        # optional (default OUT/store)
executor = "local"             # local | ray
data = "full"                  # "full" (default), "samples" (shipped) or a data folder
trust_local = false            # true: use data-folder copies that differ from the registry
device = "cuda"                # optional
retries = 2                    # Ray: a worker whose process or node dies restarts (default 2)
log_to = "mlflow"              # optional: log each unit to mlflow | wandb (suites.trackers)

[[models]]
name = "minilm"                # anything load_subject takes
init = ["pretrained", "random"]
dtype = "float32"              # auto | float32 | float16 | bfloat16
label = "MiniLM"               # optional leaderboard name ("@random" appended for random)

[[suites]]                     # any suite of the registry: edge | holmes | curriculum | cc |
suite = "holmes"               # structural; the other keys are fields of its config (the
                               # flags of `lingprobe run SUITE`, with _ for -)
tasks = ["blimp-adjunct_island", "ewt", {group = "agreement", tasks = ["blimp-a", "blimp-b"]}]
layers = "last"
probe = {seeds = 2}            # optional overrides of [probe] for this entry
limits = {blimp_pairs = 100}   # optional overrides of [limits] for this entry

[[suites]]
suite = "edge"
task = "conllu:upos"
train_file = "ud-english-ewt:train" # a registry file, or a path relative to this file
test_file = "ud-english-ewt:dev"

[[suites]]
suite = "curriculum"
phenomena = ["boolean", "negation"]
sizes = [10, 100]

[[suites]]
suite = "cc"
features = ["length", "distance"]

[probe]                        # every suite's probe settings (`lingprobe run SUITE --help`):
seeds = 3                      # ProbeGrid and TrainConfig fields for edge, holmes, curriculum
epochs = 5                     # (seeds, control, train_fractions, mdl, kind, epochs, lr, ...);
                               # seeds and the regimen's fields for cc and structural. A key
                               # that a suite of the file cannot use is an error.

[limits]                       # train, dev, test (items), sentences, blimp_pairs
sentences = 20

[resources]                    # cpus, gpus, address, workers_per_model, max_workers
cpus = 1
```
"""

from __future__ import annotations

import tomllib
from dataclasses import fields
from pathlib import Path
from typing import Any, get_args

from internals import Backend
from lingprobe.errors import LingprobeError
from suites.datasets import FULL, SAMPLES
from suites.datasets.errors import DataNotFoundError
from suites.overrides import apply
from suites.registry import SUITES
from suites.schema import model_label
from suites.suite import Limits, config_from_table
from suites.sweep.config import (
    DTYPES,
    EXECUTORS,
    INITS,
    ModelSpec,
    Resources,
    SuiteEntry,
    SweepConfig,
)
from suites.sweep.errors import SweepConfigError
from suites.sweep.toml_table import TomlTable, count, integer, text
from suites.trackers.open import TRACKERS

BACKENDS = get_args(Backend)


def load_config(path: str | Path) -> SweepConfig:
    """Parse and validate a sweep config file."""
    source = Path(path)
    if not source.is_file():
        raise DataNotFoundError(f"sweep config {source} does not exist; give a TOML file")
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
    trust_local = sweep.get(
        "trust_local", lambda v: isinstance(v, bool), "give true or false", False
    )
    device = sweep.get("device", text, "give a torch device such as 'cpu' or 'cuda'")
    retries = sweep.get(
        "retries",
        lambda v: integer(v) and v >= 0,
        "give how many times a Ray worker that died restarts (0 or more)",
        2,
    )
    log_to = sweep.get("log_to", lambda v: v in TRACKERS, f"choose one of {TRACKERS}")
    sweep.finish()
    models = _models(
        top.get(
            "models",
            lambda v: isinstance(v, list) and v != [],
            "give at least one [[models]] table",
        ),
        file,
    )
    probe = top.get("probe", lambda v: isinstance(v, dict), "give a table", {})
    limits = _limits(top.get("limits", lambda v: isinstance(v, dict), "give a table", {}), file)
    suites = _suites(
        top.get(
            "suites",
            lambda v: isinstance(v, list) and v != [],
            "give at least one [[suites]] table",
        ),
        probe,
        limits,
        base,
        file,
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
        trust_local=trust_local,
        device=device,
        log_to=log_to,
        retries=retries,
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
            shown = model_label(label.strip(), each)
            specs.append(ModelSpec(shown, name.strip(), each, dtype, seed, backend))
    labels = [s.label for s in specs]
    repeated = sorted({x for x in labels if labels.count(x) > 1})
    if repeated:
        raise SweepConfigError(
            f"{file}: [[models]] give the labels {repeated} twice; set `label` so that each"
            " model (and dtype) has its own"
        )
    return tuple(specs)


def _limits(data: dict[str, Any], file: str) -> Limits:
    try:
        return apply(Limits(), data, "[limits]")
    except LingprobeError as error:
        raise SweepConfigError(f"{file}: {error}") from error


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


def _suites(
    tables: list[Any], probe: dict[str, Any], limits: Limits, base: Path, file: str
) -> tuple[SuiteEntry, ...]:
    entries: list[SuiteEntry] = []
    for i, data in enumerate(tables):
        where = f"[[suites]] #{i + 1}"
        table = TomlTable(data, where, file)
        name = table.need("suite", lambda v: v in SUITES, f"choose one of {tuple(SUITES)}")
        own = table.get(
            "probe", lambda v: isinstance(v, dict), "give an inline table such as {seeds = 2}", {}
        )
        caps = table.get(
            "limits",
            lambda v: isinstance(v, dict),
            "give an inline table such as {train = 200}",
            {},
        )
        suite = SUITES[name]
        values = {k: v for k, v in data.items() if k not in ("suite", "probe", "limits")}
        try:
            values = suite.table_values(values, base)
            config = config_from_table(
                suite,
                values,
                probe={**probe, **own},  # [probe] applies to every suite; a key it cannot use fails
                limits=apply(limits, caps, f"{where} limits"),
                where=f"{where} ({name})",
            )
        except LingprobeError as error:
            raise SweepConfigError(f"{file}: {str(error).splitlines()[0]}") from error
        entries.append(SuiteEntry(name, config))
    return tuple(entries)
