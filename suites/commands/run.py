"""`lingprobe run SUITE`: any suite of the registry, run as a one-entry sweep.

The command's flags come from the suite's config type: the shared flags
(`suites.commands.flags`), the limits (`--limit-train ... --limit-sentences`: the fields of
`suites.suite.Limits`), the probe settings its config's `probe_fields` hold (`--epochs`,
`--lr`, `--control/--no-control` ...) and the config's own fields (`--task`, `--sizes` ...).
`--log-to mlflow|wandb` logs each unit to an experiment tracker (`suites.trackers`).
Each flag is a sweep key with `_` for `-`, and the values take the one override path sweeps use
(`suites.suite.config_from_table`). The run itself is `suites.sweep.run_sweep` on the local
executor (plan, `suite.run` per unit, merge, `suite.summarize`), so a rerun of the same command
resumes through the sweep's records and writes the same rows a sweep with the same settings does.
"""

from __future__ import annotations

import argparse
import typing
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any

from lingprobe.errors import LingprobeError
from suites.commands import flags
from suites.errors import TaskError
from suites.overrides import apply, probe_owners, settable
from suites.registry import SUITES
from suites.schema import model_label
from suites.suite import Limits, Suite, config_from_table
from suites.sweep import render, run_sweep
from suites.sweep.config import ModelSpec, SuiteEntry, SweepConfig
from suites.sweep.merge import FAILURES_JSON

SHARED = (
    *("models", "init", "layers", "seeds", "data", "trust_local"),
    *("out", "store", "memory", "quiet", "device", "log_to"),
)
OWN, PROBE, LIMIT = "own__", "probe__", "limit__"


class RunFailedError(LingprobeError, RuntimeError):
    """A unit of `lingprobe run` failed; the message is its error (all in failures.json)."""


def option(name: str) -> str:
    """The flag of a setting (`batch_size` -> `--batch-size`)."""
    return "--" + name.replace("_", "-")


def _shown(value: Any) -> str:
    if isinstance(value, tuple | list | range):
        return ",".join(str(v) for v in value)
    return str(value)


def _is_bool(hint: Any) -> bool:
    return hint is bool or bool in typing.get_args(hint)


def _add_fields(
    group: Any, defaults: Any, names: Iterable[str], dest: str, owner: str = ""
) -> None:
    """One flag per dataclass field of `defaults` in `names`; given values land in dest+name."""
    hints = settable(type(defaults))
    for name in names:
        hint, default = hints[name], getattr(defaults, name)
        where = f"{owner}.{name}" if owner else name
        choices = typing.get_args(hint) if typing.get_origin(hint) is typing.Literal else ()
        text = f"{where}{' (' + ' | '.join(map(str, choices)) + ')' if choices else ''}"
        if _is_bool(hint):
            group.add_argument(
                option(name),
                dest=dest + name,
                action=argparse.BooleanOptionalAction,
                default=argparse.SUPPRESS,
                help=f"{text} (default: {default})",
            )
        else:
            group.add_argument(
                option(name),
                dest=dest + name,
                default=argparse.SUPPRESS,
                metavar=name.upper(),
                help=f"{text} (default: {_shown(default)})",
            )


def own_fields(suite: Suite) -> list[str]:
    """The config fields that are the suite's own flags (not shared, probe or limits)."""
    config = suite.config_type
    skip = {*SHARED, "limits", *config.probe_fields, *suite.derived_fields}
    return [name for name in settable(config) if name not in skip]


def add_suite_options(
    parser: argparse.ArgumentParser, suite: Suite, *, skip: Iterable[str] = (), **defaults: Any
) -> None:
    """Every flag of `lingprobe run SUITE` (shared, limits, probe settings, own fields);
    `defaults` replace the shared flags' defaults (presets such as `lingprobe demo`)."""
    config = suite.config_type()
    shared = parser.add_argument_group("shared (every suite, the same meaning)")
    flags.add_models(
        shared,
        models=defaults.get("models", "minilm"),
        init=defaults.get("init", "pretrained"),
    )
    shared.add_argument(
        "--layers",
        default=argparse.SUPPRESS,
        help=f"{flags.LAYERS_HELP} (default: {getattr(config, 'layers', 'all')})",
    )
    seeds = probe_owners(config)["seeds"]
    shown = (getattr(config, seeds) if seeds else config).seeds
    shared.add_argument(
        "--seeds", default=argparse.SUPPRESS, help=f"{flags.SEEDS_HELP} (default: {_shown(shown)})"
    )
    flags.add_data(shared, default=defaults.get("data"))
    flags.add_output(shared, out=defaults.get("out"))
    shared.add_argument("--memory", default=argparse.SUPPRESS, help=flags.MEMORY_HELP)
    flags.add_log_to(shared)
    if hasattr(config, "limits"):
        limits = parser.add_argument_group("limits (sweep [limits]; none = everything)")
        for name in settable(Limits):
            limits.add_argument(
                option(f"limit_{name}"),
                dest=LIMIT + name,
                default=argparse.SUPPRESS,
                metavar="N",
                help=Limits.HELP[name],
            )
    probe = parser.add_argument_group("probe settings (sweep [probe])")
    for owner in type(config).probe_fields:
        settings = getattr(config, owner)
        names = [n for n in settable(type(settings)) if n not in ("seeds", "memory")]
        _add_fields(probe, settings, names, PROBE, type(settings).__name__)
    own = parser.add_argument_group(f"{suite.name} settings (sweep [[suites]] keys)")
    for key, text in suite.extra_keys.items():
        own.add_argument(option(key), dest=OWN + key, default=argparse.SUPPRESS, help=text)
    skipped = set(skip)
    _add_fields(own, config, [n for n in own_fields(suite) if n not in skipped], OWN)


def _given(args: argparse.Namespace, prefix: str) -> dict[str, Any]:
    return {k.removeprefix(prefix): v for k, v in vars(args).items() if k.startswith(prefix)}


def suite_config(suite: Suite, args: argparse.Namespace, **own: Any) -> Any:
    """The suite's config from parsed flags, through the sweeps' override path."""
    table = {**_given(args, OWN), **own}
    if "layers" in vars(args):
        table["layers"] = args.layers
    probe = _given(args, PROBE)
    for shared in ("seeds", "memory"):
        if shared in vars(args):
            probe[shared] = vars(args)[shared]
    where = f"lingprobe run {suite.name}"
    limits = None
    if "limits" in settable(suite.config_type):
        limits = apply(Limits(), _given(args, LIMIT), f"{where} limits")
    values = suite.table_values(table, Path.cwd())
    return config_from_table(suite, values, probe=probe, limits=limits, where=where)


def model_specs(args: argparse.Namespace) -> tuple[ModelSpec, ...]:
    """One `ModelSpec` per model and init of `--models` and `--init`."""
    names = flags.csv(args.models)
    if not names:
        raise TaskError("--models: give at least one model name")
    inits = flags.inits(args)
    return tuple(ModelSpec(model_label(n, init), n, init) for n in names for init in inits)


def sweep_of(
    args: argparse.Namespace, entries: Iterable[SuiteEntry], store: Path | None = None
) -> SweepConfig:
    """The one-entry (or preset) sweep of a `lingprobe run` command line."""
    return SweepConfig(
        out=flags.out_path(args),
        models=model_specs(args),
        suites=tuple(entries),
        store=Path(args.store).expanduser().resolve() if args.store else store,
        data=args.data,
        trust_local=args.trust_local,
        device=args.device,
        log_to=args.log_to,
    )


def run_and_report(sweep: SweepConfig, quiet: bool) -> int:
    """Run the sweep locally, render its report; the first failed unit's error is raised."""
    summary = run_sweep(sweep, executor="local", progress=not quiet)
    render(summary.out)
    if summary.failed:
        first = summary.failures.row(0, named=True)
        raise RunFailedError(
            f"{summary.failed} unit(s) failed, first {first['unit']}: {first['message']}"
            f" ({first['error_type']}; every traceback in {summary.out / FAILURES_JSON})"
        )
    print(f"\nwrote results.parquet, leaderboard.parquet and the report to {summary.out}/")
    return 0


def run_suite(suite: Suite, args: argparse.Namespace) -> int:
    """Handler of `lingprobe run SUITE`."""
    entry = SuiteEntry(suite.name, suite_config(suite, args))
    return run_and_report(sweep_of(args, [entry]), args.quiet)


def register(parsers: argparse._SubParsersAction) -> None:
    """Add `lingprobe run` with one subcommand per suite of the registry."""
    run_parser = parsers.add_parser(
        "run",
        help="run one suite on one or more models (a one-entry sweep: rerun to resume)",
        description=f"Run one suite: {', '.join(SUITES)}. Every suite takes the same shared"
        " flags; the others are its sweep keys.",
    )
    run = run_parser.add_subparsers(dest="suite", metavar="SUITE")

    def run_without_suite(args: argparse.Namespace) -> int:
        run_parser.print_help()
        return 2

    run_parser.set_defaults(handler=run_without_suite)
    for suite in SUITES.values():
        p = run.add_parser(suite.name, help=suite.summary, description=suite.summary)
        add_suite_options(p, suite)
        p.set_defaults(handler=partial(run_suite, suite))
